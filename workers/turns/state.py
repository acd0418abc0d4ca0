"""A turn's shared state: what a worker lends every turn (`TurnEnvironment`), a turn's state across its rounds
(`TurnRun`), its outcome and its progress callbacks.

The agentic path (`workers.turns.engine`) and the guided path (`workers.turns.guided`) both work on these; neither
imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from core.answer.model import Answer
from core.config.settings import Settings
from core.store.database import Store
from search.service import Encoders
from workers.models.types import Message, ModelProvider
from workers.tools.base import ToolContext
from workers.turns.follow_ups import PresentationRequest

Progress = Callable[[str], None]


@runtime_checkable
class StepProgress(Protocol):
    """A progress callback that also shows each tool step on its own (a Slack assistant thread's task updates)."""

    def __call__(self, text: str) -> None: ...

    def step(self, step_id: str, title: str, state: str) -> None: ...


@dataclass
class TurnEnvironment:
    """What a worker process (or the console) holds once and lends to every turn."""

    settings: Settings
    store: Store
    encoders: Encoders
    provider: ModelProvider
    owner: str


@dataclass
class TurnOutcome:
    outcome: Literal["finished", "busy", "already_finished", "missing", "lost_lease"]
    turn_id: int
    status: str | None = None
    retry_in_s: float = 0.0


@dataclass
class TurnRun:
    """A turn's state across rounds."""

    turn_id: int
    intent: str
    deadline: float
    context: ToolContext
    messages: list[Message] = field(default_factory=list)
    rounds: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    last_text: str = ""
    refusal: str | None = None  # the answer, without a model call, when the user may query nothing
    #: The user's earlier answer and how to show it again, for a follow-up that needs no new SQL ("as a chart").
    show_again: tuple[Answer, PresentationRequest] | None = None
    #: The next round's ordinal, once known: a first attempt starts at 1 without asking the store; a later one
    #: reads where the earlier attempts stopped, once, in its first round.
    next_ordinal: int | None = None
