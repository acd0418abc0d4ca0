"""Delivering a chat turn: the status message while it runs, then exactly one answer (SPEC §8).

The status message is posted on the turn's first progress line and edited as rounds progress (at most one edit
per `STATUS_INTERVAL_S`, and only when the text changed); its message id is stored as the turn's `status` outbox
row. The answer is the turn's `answer` outbox row, written by the turn engine in the transaction that recorded the
answer. `deliver_answer` locks that row while it posts, so two deliveries of one answer never run at once, and
edits the message it stored (the status message, or an answer an earlier attempt created) instead of posting a
new one: however often delivery is retried, the thread shows one answer. Status trouble never fails a turn.

In a Slack assistant thread there is no status message: progress is the thread's status line, set per round, and
the answer is streamed into a new message whose ts is stored as the `status` row the moment the stream starts (in
its own transaction), so a retry after a crash mid-stream edits that message rather than posting a second answer.
The turn's tool steps open that stream early, as task updates (`StatusReporter.step`): the `status` row then says
the stream is `open` and holds its tasks; the answer's delivery marks it `answering` (committed on its own) before
it continues the stream, so a retry never appends the answer twice but replaces the message with the whole answer,
as it does when a task update failed (`broken`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.orm import Session

from bot.outbound import DeliveryFailed, Destination, OpenStream, Outbound, Outbounds
from core.answer.model import Answer
from core.store.database import Store
from core.store.models import OutboxMessage
from core.store.repositories import conversations, outbox
from core.store.repositories.turns import CHAT_PLATFORMS, now

log = logging.getLogger(__name__)

STATUS_INTERVAL_S = 1.0
#: States of a stream the turn's task updates opened (the `status` row's payload["stream"]).
STREAM_OPEN, STREAM_BROKEN, STREAM_ANSWERING = "open", "broken", "answering"
#: Delivery attempts of one answer before it is given up (marked failed, with the last error kept).
MAX_ATTEMPTS = 8
#: Seconds before the next attempt after the n-th failure (the last value repeats).
BACKOFF_S = (2.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0)


def destination(session: Session, turn_id: int) -> Destination | None:
    """Where turn `turn_id`'s messages go; None for a console turn (or a turn that no longer exists)."""
    row = conversations.thread_of_turn(session, turn_id)
    if row is None or row.platform not in CHAT_PLATFORMS:
        return None
    return Destination(row.platform, row.channel_id, row.thread_id, row.reference)


class StatusReporter:
    """The engine's progress callback for a chat turn: posts, then edits, the turn's status message."""

    def __init__(self, store: Store, outbound: Outbound, to: Destination, turn_id: int) -> None:
        self.store = store
        self.outbound = outbound
        self.to = to
        self.turn_id = turn_id
        self.message_id: str | None = _status_message_id(store, turn_id)
        self._shown = ""
        self._shown_at = 0.0
        self._pending: str | None = None  # the latest line held back by the interval, shown at the next chance
        self._broken = False
        stream = _stream_in_store(store, turn_id) if to.assistant else None
        open_again = stream is not None and stream[1] == STREAM_OPEN  # an earlier attempt's stream, still open
        self._stream_ts: str | None = stream[0] if stream is not None and open_again else None
        self._tasks: dict[str, dict[str, str]] = {t["id"]: t for t in stream[2]} if stream and open_again else {}
        self._stream_broken = stream is not None and not open_again

    def __call__(self, text: str) -> None:
        if self._broken or text == self._shown:
            return
        shown_once = self.message_id is not None or (self.to.assistant and bool(self._shown))
        if shown_once and time.monotonic() - self._shown_at < STATUS_INTERVAL_S:
            self._pending = text  # not dropped: the next line or step after the interval shows the latest
            return
        self._pending = None
        posted: str | None = None
        try:
            if self.to.assistant:
                self.outbound.set_thread_status(self.to, text)
            elif self.message_id is None:
                posted = self.outbound.post_status(self.to, text)
            else:
                self.outbound.update_status(self.to, self.message_id, text)
        except Exception as exc:  # DeliveryFailed, or a client library's own error: the answer still comes; stop
            # trying to show progress for this turn (status trouble never fails it)
            failed = isinstance(exc, DeliveryFailed)
            log.warning("turn %s: status message not shown: %s", self.turn_id, exc, exc_info=not failed)
            self._broken = True
            return
        if posted is not None:
            self.message_id = posted
            _record_status(self.store, self.turn_id, posted, text)
        self._shown = text
        self._shown_at = time.monotonic()

    def step(self, step_id: str, title: str, state: str) -> None:
        """A tool step (`state` in_progress, complete or error) as a task update in an assistant thread's stream,
        which the first step opens; elsewhere (a channel's status message) nothing. Never fails the turn."""
        if self._pending is not None and time.monotonic() - self._shown_at >= STATUS_INTERVAL_S:
            self(self._pending)  # a status line the interval held back, before the step moves on
        if not self.to.assistant or self._stream_broken:
            return
        task = {"id": step_id, "title": title, "status": state}
        self._tasks[step_id] = task
        try:
            ts = self.outbound.stream_tasks(self.to, self._stream_ts, [task])
        except Exception as exc:  # DeliveryFailed, or a client library's own error: the answer still comes, streamed
            # anew or replacing this stream
            failed = isinstance(exc, DeliveryFailed)
            log.warning("turn %s: task update not shown: %s", self.turn_id, exc, exc_info=not failed)
            self._stream_broken = True
            if self._stream_ts is not None:
                _record_stream(self.store, self.turn_id, self._stream_ts, STREAM_BROKEN, list(self._tasks.values()))
            return
        self._stream_ts = ts
        _record_stream(self.store, self.turn_id, ts, STREAM_OPEN, list(self._tasks.values()))


@dataclass(frozen=True)
class Delivery:
    outcome: Literal["delivered", "nothing", "retry", "failed"]
    retry_in_s: float = 0.0
    message_id: str | None = None
    error: str | None = None


def deliver_answer(store: Store, outbounds: Outbounds, turn_id: int) -> Delivery:
    """Post turn `turn_id`'s pending answer (replacing its status message); record what happened."""
    with store.transaction() as session:
        row = outbox.locked_answer(session, turn_id)
        if row is None or row.status != "pending":
            return Delivery("nothing")
        to = destination(session, turn_id)
        if to is None:
            row.status, row.last_error = "failed", "the turn has no chat conversation to answer in"
            return Delivery("failed", error=row.last_error)
        target = row.message_id or outbox.status_message_id(session, turn_id)
        open_stream = None
        stream = _stream_in(session, turn_id) if to.assistant and row.message_id is None else None
        if stream is not None and stream[1] == STREAM_OPEN:
            # Said before the answer continues the stream: should this attempt die mid-way, the next one replaces
            # the message with the whole answer instead of appending it a second time.
            _record_stream(store, turn_id, stream[0], STREAM_ANSWERING, stream[2])
            open_stream, target = OpenStream(stream[0], tuple(stream[2])), None
        row.attempts += 1
        row.updated_at = now()
        try:
            created = (lambda ts: _record_status(store, turn_id, ts, "answer stream")) if to.assistant else None
            message_id = outbounds.for_platform(to.platform).post_answer(
                to, target, Answer.from_stored(row.payload), created, open_stream
            )
        except DeliveryFailed as exc:
            row.message_id = exc.message_id or row.message_id
            return _attempt_failed(row, turn_id, str(exc), final=exc.final)
        except Exception as exc:  # a client library's own error: counted like any other, so retries stay bounded
            log.exception("turn %s: answer delivery raised %s", turn_id, type(exc).__name__)
            return _attempt_failed(row, turn_id, f"{type(exc).__name__}: {exc}", final=False)
        row.message_id = message_id
        row.status = "sent"
        row.sent_at = now()
        row.last_error = None
        return Delivery("delivered", message_id=message_id)


def _attempt_failed(row: OutboxMessage, turn_id: int, error: str, *, final: bool) -> Delivery:
    """Record a failed delivery attempt of the answer `row`: retried with backoff, or, when retrying cannot help or
    MAX_ATTEMPTS are spent, given up once, with the reason kept on the row and logged."""
    row.last_error = error[:2000]
    if final or row.attempts >= MAX_ATTEMPTS:
        row.status = "failed"
        log.error("turn %s: answer not delivered after %d attempts: %s", turn_id, row.attempts, error)
        return Delivery("failed", error=row.last_error)
    wait = BACKOFF_S[min(row.attempts, len(BACKOFF_S)) - 1]
    log.warning("turn %s: answer delivery failed (attempt %d), retry in %.0f s: %s", turn_id, row.attempts, wait, error)
    return Delivery("retry", retry_in_s=wait, error=row.last_error)


def pending_answers(store: Store, older_than_s: float, limit: int = 100) -> list[int]:
    """Turns whose answer is still pending and was last tried (or queued) at least `older_than_s` ago."""
    with store.transaction() as session:
        rows = outbox.pending_answers(session, limit * 4)
    cutoff = now().timestamp() - older_than_s
    due = [r.turn_id for r in rows if r.last_tried.timestamp() <= cutoff and r.turn_id]
    return due[:limit]


def _status_message_id(store: Store, turn_id: int) -> str | None:
    with store.transaction() as session:
        return outbox.status_message_id(session, turn_id)


def _record_status(store: Store, turn_id: int, message_id: str, text: str) -> None:
    with store.transaction() as session:
        outbox.record_status_message(session, turn_id, message_id, text)


Stream = tuple[str, str, list[dict[str, str]]]  # (ts, state, tasks) of a stream the turn's task updates opened


def _stream_in(session: Session, turn_id: int) -> Stream | None:
    row = outbox.status_row(session, turn_id)
    if row is None or not row.message_id or not isinstance(row.payload, dict) or "stream" not in row.payload:
        return None
    tasks = [
        {"id": str(t["id"]), "title": str(t.get("title") or ""), "status": str(t.get("status") or "")}
        for t in row.payload.get("tasks") or []
        if isinstance(t, dict) and t.get("id")
    ]
    return str(row.message_id), str(row.payload["stream"]), tasks


def _stream_in_store(store: Store, turn_id: int) -> Stream | None:
    with store.transaction() as session:
        return _stream_in(session, turn_id)


def _record_stream(store: Store, turn_id: int, message_id: str, state: str, tasks: list[dict[str, str]]) -> None:
    payload = {"text": "task stream", "stream": state, "tasks": tasks}
    with store.transaction() as session:
        outbox.record_stream(session, turn_id, message_id, payload)
