"""The outbox (`outbox` table, `OutboxMessage`): one row per turn and kind, written in the transaction that caused it.

Kinds: `job`, the stored turn's job, which the relay publishes after commit (bot/relay.py); `answer`, the turn's one
answer, queued by the turn engine (`turns.queue_answer`) and locked by its delivery while it posts
(bot/delivery.py); `status`, the chat message that shows the turn's progress (a status message, or the stream an
assistant thread's answer goes into), whose message id a retried delivery edits instead of posting anew.

Locking reads skip rows another transaction holds, so two relays or two deliveries never handle the same row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from core.store.models import OutboxMessage


@dataclass(frozen=True)
class PendingAnswer:
    """A pending answer row: its turn (None when the turn is gone) and when it was last tried, or else queued."""

    turn_id: int | None
    last_tried: datetime


@dataclass(frozen=True)
class StatusRow:
    """A turn's `status` row: the message it names and its payload ({"text"}, or a stream's state and tasks)."""

    message_id: str | None
    payload: Any


def queue_job(session: Session, turn_id: int, payload: dict[str, Any]) -> OutboxMessage:
    """Add the turn's pending `job` row to the session (written when the caller's transaction flushes)."""
    row = OutboxMessage(turn_id=turn_id, kind="job", payload=payload)
    session.add(row)
    return row


def pending_jobs(session: Session, limit: int) -> Sequence[OutboxMessage]:
    """Up to `limit` pending job rows, oldest first, locked until the transaction ends; rows locked elsewhere are
    skipped."""
    return session.scalars(
        select(OutboxMessage)
        .where(OutboxMessage.kind == "job", OutboxMessage.status == "pending")
        .order_by(OutboxMessage.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()


def locked_answer(session: Session, turn_id: int) -> OutboxMessage | None:
    """The turn's answer row, locked until the transaction ends; None when there is none or another transaction
    holds it (another delivery of the same answer is under way)."""
    return session.scalars(
        select(OutboxMessage)
        .where(OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "answer")
        .with_for_update(skip_locked=True)
    ).first()


def pending_answers(session: Session, limit: int) -> list[PendingAnswer]:
    """The first `limit` pending answer rows (oldest first), unlocked."""
    rows = session.execute(
        select(OutboxMessage.turn_id, OutboxMessage.created_at, OutboxMessage.updated_at)
        .where(OutboxMessage.kind == "answer", OutboxMessage.status == "pending")
        .order_by(OutboxMessage.id)
        .limit(limit)
    ).all()
    return [PendingAnswer(row.turn_id, row.updated_at or row.created_at) for row in rows]


def status_message_id(session: Session, turn_id: int) -> str | None:
    """The message id the turn's `status` row names (None when the turn has no such row or it names none)."""
    return session.scalar(
        select(OutboxMessage.message_id).where(OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "status")
    )


def status_row(session: Session, turn_id: int) -> StatusRow | None:
    """The turn's `status` row, or None when it has none."""
    row = session.execute(
        select(OutboxMessage.message_id, OutboxMessage.payload).where(
            OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "status"
        )
    ).first()
    return None if row is None else StatusRow(row.message_id, row.payload)


def record_status_message(session: Session, turn_id: int, message_id: str, text: str) -> None:
    """Store `message_id` as the turn's status message (first shown with `text`); a row already there keeps its
    payload and takes the new message id."""
    at = datetime.now(UTC)
    session.execute(
        insert(OutboxMessage)
        .values(
            turn_id=turn_id, kind="status", payload={"text": text}, status="sent", message_id=message_id, sent_at=at
        )
        .on_conflict_do_update(index_elements=["turn_id", "kind"], set_={"message_id": message_id, "updated_at": at})
    )


def record_stream(session: Session, turn_id: int, message_id: str, payload: dict[str, Any]) -> None:
    """Store `message_id` and `payload` (the stream's state and tasks) as the turn's status row, replacing both."""
    at = datetime.now(UTC)
    session.execute(
        insert(OutboxMessage)
        .values(turn_id=turn_id, kind="status", payload=payload, status="sent", message_id=message_id, sent_at=at)
        .on_conflict_do_update(
            index_elements=["turn_id", "kind"], set_={"message_id": message_id, "payload": payload, "updated_at": at}
        )
    )
