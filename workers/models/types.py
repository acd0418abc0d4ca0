"""The provider-neutral shape of a conversation with a model: messages, tool specs, tool calls and replies.

The turn engine speaks only these types; each provider translates them to and from its vendor SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from core.errors import TablescoutError


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its name, what it is for, and a JSON schema of its arguments.

    `grammar`: GBNF rules (llama.cpp's grammar format) whose rule `argument` produces the text of the one string
    argument `grammar_argument`; a provider that constrains decoding by grammar writes a call of this tool under it
    when it is the only tool offered, others ignore it."""

    name: str
    description: str
    parameters: dict[str, Any]
    grammar: str | None = None
    grammar_argument: str | None = None


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call the model asked for. `id` pairs it with its result in the next request."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Message:
    """A user message (text and/or tool results) or an assistant message (text and/or tool calls)."""

    role: Literal["user", "assistant"]
    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ModelReply:
    """What one model call returned. `stop_reason` is "tool_use" when `tool_calls` is not empty, else "end"
    (or "max_tokens" when the reply was cut)."""

    text: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    stop_reason: str = "end"
    usage: Usage = field(default_factory=Usage)
    model: str = ""


class ModelProvider(Protocol):
    #: "anthropic:<model>" or "openai:<model>", as stored with every round.
    label: str
    #: A small model on a CPU (the local provider): tool results are written briefly (fewer candidates, no code
    #: lists, shorter cards), because every input token costs time and a long result crowds out the rules, and an
    #: answer carrying a number that no tool returned is not passed on as an answer (such a model makes them up).
    small_model: bool

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        timeout_s: float,
        temperature: float | None = None,
    ) -> ModelReply:
        """One model call. Never retries beyond the SDK's own retries; never runs past `timeout_s` in total.
        `temperature` replaces the service's own sampling temperature for this call (None: the service's)."""
        ...


#: What a chat user reads when the model service cannot be reached, is overloaded or failed.
MODEL_UNAVAILABLE = "The model service is not answering right now; try again in a few minutes."
#: ... when the service refused tablescout's request (key, permission, model name): only the operator can fix it.
MODEL_REFUSED = (
    "The model service refused my request, so I cannot answer right now; the operator can see why in the log."
)
#: ... when the model's reply could not be read (invalid JSON, a malformed tool call).
MODEL_UNREADABLE = "The model gave a reply I could not read; please ask again."


class ModelError(TablescoutError):
    """The model could not be reached or refused the request, or its reply could not be read.

    `str(exc)` is for the operator and the log (endpoint, HTTP status, the server's words; never a secret);
    `user_message` is what a chat user reads: no host, URL or server text."""

    def __init__(self, message: str, *, user_message: str = MODEL_UNAVAILABLE) -> None:
        super().__init__(message)
        self.user_message = user_message


class ModelTimeout(ModelError):
    """The model did not answer within the time left to the turn."""


class ContextExceeded(ModelError):
    """The conversation no longer fits the model's context window (a small local model's, typically)."""
