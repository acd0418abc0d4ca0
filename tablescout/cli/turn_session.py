"""Console turns: a message becomes a stored turn, runs in a worker (Redis set) or in this process, and its
stored result comes back for printing. The same turn code runs either way.

When the metadata store goes away meanwhile, the console brings it back (starting the embedded server again) and
goes on: a turn running here is run again, a worker's turn is waited for while the worker runs it again. Only a
store that stays away ends the wait, with a message that says what becomes of the turn.
"""

from __future__ import annotations

import getpass
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bot.messages import parse_message, too_long
from core.access.permissions import parse_user_ref, resolve_principal
from core.access.users import UserRef
from core.answer.model import Answer
from core.config.settings import Settings
from core.errors import ConfigError, StoreUnavailable, TablescoutError
from core.store.database import Store, connection_lost
from core.store.models import Turn
from core.store.repositories import sources as source_repo
from core.store.repositories import turns as turn_repo
from search.service import ensure_known_user

CONSOLE = "console"
POLL_S = 0.1
#: How long past the turn's deadline the console waits for a worker before giving up on it.
WAIT_MARGIN_S = 60.0
#: How often a turn running in this process is run again after the metadata store went away under it.
STORE_RETRIES = 2
#: How long the console waits for the metadata store to answer again before it gives up on the turn.
STORE_BACK_S = 60.0
STORE_RETRY_S = 1.0
STORE_LOST = "The metadata store went away; bringing it back…"

Progress = Callable[[str], None]
T = TypeVar("T")


class TurnWaitError(TablescoutError):
    """No worker finished the turn in time (is `tablescout worker` running against the same Redis?)."""


class StoreLostError(TablescoutError):
    """The metadata store went away during a turn and did not come back in time."""


@dataclass
class ConsoleSession:
    """One console conversation: who is asking, what is pinned, and where turns run."""

    settings: Settings
    store: Store
    user: str | None = None
    pins: Sequence[str] = ()
    thread_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    _environment: Any = None

    @property
    def asker(self) -> UserRef:
        if self.user is None:
            return UserRef("operator", getpass.getuser())
        return parse_user_ref(self.user)

    @property
    def in_process(self) -> bool:
        return self.settings.redis_url is None

    def check_user(self) -> None:
        if self.user is None:
            return
        platform, user_id = self.asker
        with self.store.transaction() as session:
            ensure_known_user(resolve_principal(session, self.settings.file, platform, user_id))

    def submit(self, text: str) -> int:
        """Store the message as a turn of this conversation and return its id."""
        if not text.strip():
            raise ConfigError("the question is empty")
        refusal = too_long(text)
        if refusal is not None:
            raise ConfigError(refusal)
        platform, user_id = self.asker
        with self.store.transaction() as session:
            labels = source_repo.labels(session)
            parsed = parse_message(text, labels=labels, bot_user_id=None)
            if parsed.remember and not parsed.note_text:
                raise ConfigError('say what to remember after "remember this:", e.g. "remember this: X is a copy"')
            pins = list(dict.fromkeys([*self._canonical_pins(labels), *parsed.pins]))
            conversation = turn_repo.conversation(
                session, platform=CONSOLE, channel_id=CONSOLE, thread_id=self.thread_id, private=True
            )
            turn = turn_repo.create_turn(
                session,
                conversation.id,
                user_platform=platform,
                user_id=user_id,
                question=(parsed.note_text or parsed.text) if parsed.remember else parsed.text,
                pins=pins,
                intent="note" if parsed.remember else "question",
            )
            return turn.id

    def _canonical_pins(self, labels: dict[str, str]) -> list[str]:
        pins = []
        for pin in self.pins:
            canonical = labels.get(pin.lower())
            if canonical is None:
                raise ConfigError(f"there is no database named {pin!r}; `tablescout source list` shows them")
            pins.append(canonical)
        return pins

    def run(self, turn_id: int, progress: Progress) -> Answer:
        """Run the turn (in a worker or here) and return its stored result."""
        if self.in_process:
            self._run_here(turn_id, progress)
            lost = self._lost_here(turn_id)
        else:
            self._wait_for_worker(turn_id, progress)
            lost = self._lost_on_worker(turn_id)
        return self._through_store_loss(lambda: self.result(turn_id), progress, lost)

    def _run_here(self, turn_id: int, progress: Progress) -> None:
        from workers.runtime import open_environment
        from workers.turns.engine import run_turn

        for attempt in range(STORE_RETRIES + 1):
            try:
                if self._environment is None:
                    self._environment = open_environment(self.settings, self.store)
                run_turn(self._environment, turn_id, progress)
                return
            except Exception as exc:
                if not connection_lost(exc):
                    raise
                if attempt == STORE_RETRIES:
                    raise StoreLostError(self._lost_here(turn_id)) from exc
            # The turn's lease is this process's own: the next run claims it again and starts over.
            self._bring_back_store(progress, self._lost_here(turn_id))

    def _wait_for_worker(self, turn_id: int, progress: Progress) -> None:
        from workers.app import TURN_TASK, app

        app.send_task(TURN_TASK, args=[turn_id])
        give_up = time.monotonic() + self.settings.turn_deadline_s + WAIT_MARGIN_S
        shown = ""
        lost = self._lost_on_worker(turn_id)
        while time.monotonic() < give_up:
            line = self._through_store_loss(lambda: self._worker_status(turn_id), progress, lost)
            if line is None:
                return
            if line != shown:
                progress(line)
                shown = line
            time.sleep(POLL_S)
        raise TurnWaitError(
            f"turn {turn_id} was not finished within {self.settings.turn_deadline_s + WAIT_MARGIN_S:.0f} s; "
            "is `tablescout worker` running with the same TABLESCOUT_REDIS_URL and store?"
        )

    def _worker_status(self, turn_id: int) -> str | None:
        """The status line of a turn a worker runs, or None once it is finished."""
        with self.store.transaction() as session:
            turn = session.get(Turn, turn_id)
            assert turn is not None
            if turn.status in turn_repo.FINISHED:
                return None
            calls = turn_repo.tool_calls_of(session, turn_id)
            return "Waiting for a worker…" if turn.status == "queued" else _status_of(calls)

    def _through_store_loss(self, action: Callable[[], T], progress: Progress, lost: str) -> T:
        """`action`, done again after the store came back when the store went away under it."""
        while True:
            try:
                return action()
            except Exception as exc:
                if not connection_lost(exc):
                    raise
            self._bring_back_store(progress, lost)

    def _bring_back_store(self, progress: Progress, lost: str) -> None:
        """Start the store again (or wait for a store named by URL to answer), up to STORE_BACK_S."""
        progress(STORE_LOST)
        give_up = time.monotonic() + STORE_BACK_S
        while True:
            try:
                self.store.revive()
                return
            except StoreUnavailable as exc:
                if time.monotonic() > give_up:
                    raise StoreLostError(f"{lost} ({exc})") from exc
            time.sleep(STORE_RETRY_S)

    @staticmethod
    def _lost_here(turn_id: int) -> str:
        return f"lost the metadata store during turn {turn_id}, which was not answered; please ask again"

    @staticmethod
    def _lost_on_worker(turn_id: int) -> str:
        return (
            f"lost the metadata store while a worker ran turn {turn_id}; the workers run it again once the store "
            "is back, but this console cannot show the answer"
        )

    def result(self, turn_id: int) -> Answer:
        from core.store.repositories.turns import answer_of

        with self.store.transaction() as session:
            turn = session.get(Turn, turn_id)
            assert turn is not None
            return answer_of(turn)


def _status_of(calls: Sequence[Any]) -> str:
    from workers.tools.toolbox import status_line

    if not calls:
        return "Thinking…"
    return status_line(calls[-1].tool, calls[-1].arguments or {})
