"""Conversations, turns, rounds and tool calls: how a message becomes a stored turn and how its work is kept.

A turn is claimed with a lease before it runs, so a job delivered twice never runs the same turn concurrently,
and it is finished with a conditional update, so only the lease holder can record the one answer. A turn whose job
was lost (queued and never started, or running with a lease nobody renews) is found by `stale_turns` and either
queued again (`requeue`, which also takes the turn from a holder that may still be alive) or failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from core.answer.model import Answer
from core.store.models import Conversation, OutboxMessage, Round, ToolCall, Turn

FINISHED = ("answered", "partial", "failed")
UNFINISHED = ("queued", "running")
CHAT_PLATFORMS = ("slack", "teams")  # conversations answered through the outbox


def now() -> datetime:
    return datetime.now(UTC)


def conversation(
    session: Session,
    *,
    platform: str,
    channel_id: str,
    thread_id: str = "",
    workspace_id: str = "",
    private: bool = False,
    reference: dict[str, Any] | None = None,
) -> Conversation:
    """The conversation of a channel thread (or direct-message thread), created on first use."""
    stmt = (
        insert(Conversation)
        .values(
            platform=platform,
            workspace_id=workspace_id,
            channel_id=channel_id,
            thread_id=thread_id,
            private=private,
            reference=reference,
        )
        .on_conflict_do_nothing(index_elements=["platform", "workspace_id", "channel_id", "thread_id"])
    )
    session.execute(stmt)
    found = session.scalars(
        select(Conversation).where(
            Conversation.platform == platform,
            Conversation.workspace_id == workspace_id,
            Conversation.channel_id == channel_id,
            Conversation.thread_id == thread_id,
        )
    ).one()
    if reference is not None and found.reference != reference:
        found.reference = reference
    return found


def conversation_exists(session: Session, *, platform: str, workspace_id: str, channel_id: str, thread_id: str) -> bool:
    """Whether tablescout already converses in this thread (a reply there is a follow-up)."""
    found = session.scalar(
        select(Conversation.id).where(
            Conversation.platform == platform,
            Conversation.workspace_id == workspace_id,
            Conversation.channel_id == channel_id,
            Conversation.thread_id == thread_id,
        )
    )
    return found is not None


def create_turn(
    session: Session,
    conversation_id: int,
    *,
    user_platform: str,
    user_id: str,
    question: str,
    pins: Sequence[str] = (),
    intent: str = "question",
) -> Turn:
    turn = Turn(
        conversation_id=conversation_id,
        user_platform=user_platform,
        user_id=user_id,
        question=question,
        pins=list(pins),
        intent=intent,
        status="queued",
    )
    session.add(turn)
    session.flush()
    return turn


@dataclass(frozen=True)
class Claim:
    outcome: Literal["claimed", "busy", "finished", "missing"]
    retry_in_s: float = 0.0
    attempt: int = 0


def claim(session: Session, turn_id: int, owner: str, lease_s: float) -> Claim:
    """Take the turn's lease unless it is finished or another live holder has it (row locked meanwhile)."""
    turn = session.scalars(select(Turn).where(Turn.id == turn_id).with_for_update()).one_or_none()
    if turn is None:
        return Claim("missing")
    if turn.status in FINISHED:
        return Claim("finished")
    at = now()
    if turn.lease_owner not in (None, owner) and turn.lease_until is not None and turn.lease_until > at:
        return Claim("busy", retry_in_s=(turn.lease_until - at).total_seconds())
    turn.lease_owner = owner
    turn.lease_until = at + timedelta(seconds=lease_s)
    turn.status = "running"
    turn.attempts += 1
    turn.started_at = turn.started_at or at
    return Claim("claimed", attempt=turn.attempts)


def finish(
    session: Session,
    turn_id: int,
    owner: str,
    *,
    answer: Answer,
    error: str | None,
    usage: dict[str, Any],
) -> bool:
    """Record `answer` if `owner` still holds the lease; False when another attempt owns the turn now. The turn
    keeps the answer's text, status and tables in their columns and the whole answer as JSON in `result`."""
    outcome = session.execute(
        update(Turn)
        .where(Turn.id == turn_id, Turn.lease_owner == owner, Turn.status == "running")
        .values(
            status=answer.status,
            answer=answer.text,
            error=error,
            tables_used=list(answer.tables_used),
            usage=usage,
            result=answer.to_json(),
            finished_at=now(),
            lease_owner=None,
            lease_until=None,
        )
    )
    return bool(outcome.rowcount == 1)  # type: ignore[attr-defined]


def fail_unstarted(session: Session, turn_id: int, message: str) -> None:
    """Record that a turn could not even start (its setup failed), unless it has finished meanwhile; a chat turn's
    user is told why, through the same answer outbox row a finished turn uses."""
    failed = session.execute(
        update(Turn)
        .where(Turn.id == turn_id, Turn.status.not_in(FINISHED))
        .values(status="failed", answer=message, error=message, finished_at=now(), lease_owner=None, lease_until=None)
        .returning(Turn.conversation_id)
    ).first()
    if failed is None:
        return
    platform = session.scalar(select(Conversation.platform).where(Conversation.id == failed.conversation_id))
    if platform in CHAT_PLATFORMS:
        queue_answer(session, turn_id, Answer(status="failed", text=message))


def answer_of(turn: Turn) -> Answer:
    """The answer recorded for a finished `turn`, as the type it was stored from."""
    stored = dict(turn.result or {})
    stored |= {"status": turn.status, "answer": turn.answer or "", "tables_used": list(turn.tables_used or [])}
    return Answer.from_stored(stored)


def finished_answer(session: Session, turn_id: int) -> tuple[Answer, datetime] | None:
    """A finished turn's answer and when it finished; None for a turn that is unknown or not finished."""
    turn = session.get(Turn, turn_id)
    if turn is None or turn.status not in FINISHED or turn.finished_at is None:
        return None
    return answer_of(turn), turn.finished_at


def stale_turns(
    session: Session, *, queued_before: datetime, lease_ended_before: datetime, limit: int = 100
) -> list[Turn]:
    """Unfinished turns nobody works on: queued (or queued again) before `queued_before`, or running with a lease
    that ended before `lease_ended_before`; oldest first, rows locked and locked ones skipped, so two sweeps never
    handle the same turn and a turn being claimed right now is left alone."""
    stmt = (
        select(Turn)
        .where(
            Turn.status.in_(UNFINISHED),  # the partial index ix_turns_unfinished
            or_(
                and_(Turn.status == "queued", func.coalesce(Turn.requeued_at, Turn.queued_at) < queued_before),
                and_(
                    Turn.status == "running",
                    func.coalesce(Turn.lease_until, Turn.started_at, Turn.queued_at) < lease_ended_before,
                ),
            ),
        )
        .order_by(Turn.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(session.scalars(stmt))


def requeue(turn: Turn) -> None:
    """Mark `turn` (locked by `stale_turns`) queued again for a new job; its lease ends, so an attempt that is still
    alive can no longer record an answer, and the new job's attempt claims it."""
    turn.status = "queued"
    turn.lease_owner = None
    turn.lease_until = None
    turn.requeues += 1
    turn.requeued_at = now()


def queue_answer(session: Session, turn_id: int, answer: Answer) -> bool:
    """The answer's outbox row; unique per turn, so a second attempt can never queue a second answer."""
    stmt = (
        insert(OutboxMessage)
        .values(turn_id=turn_id, kind="answer", payload=answer.to_json(), status="pending")
        .on_conflict_do_nothing(index_elements=["turn_id", "kind"])
    )
    return bool(session.execute(stmt).rowcount == 1)  # type: ignore[attr-defined]


def next_round_ordinal(session: Session, turn_id: int) -> int:
    current = session.scalar(select(func.max(Round.ordinal)).where(Round.turn_id == turn_id))
    return (current or 0) + 1


def add_round(session: Session, turn_id: int, ordinal: int, model: str, started_at: datetime) -> Round:
    row = Round(turn_id=turn_id, ordinal=ordinal, model=model, started_at=started_at)
    session.add(row)
    session.flush()
    return row


def add_tool_call(session: Session, round_id: int, ordinal: int, tool: str, arguments: dict[str, Any]) -> ToolCall:
    row = ToolCall(round_id=round_id, ordinal=ordinal, tool=tool, arguments=arguments)
    session.add(row)
    session.flush()
    return row


def earlier_turns(session: Session, conversation_id: int, before_turn_id: int, limit: int = 10) -> list[Turn]:
    """Finished turns of the conversation before this one, oldest first."""
    rows = session.scalars(
        select(Turn)
        .where(Turn.conversation_id == conversation_id, Turn.id < before_turn_id, Turn.status.in_(FINISHED))
        .order_by(Turn.id.desc())
        .limit(limit)
    )
    return list(rows)[::-1]


def tool_calls_of(session: Session, turn_id: int) -> list[ToolCall]:
    stmt = (
        select(ToolCall)
        .join(Round, Round.id == ToolCall.round_id)
        .where(Round.turn_id == turn_id)
        .order_by(Round.ordinal, ToolCall.ordinal)
    )
    return list(session.scalars(stmt))
