"""Answer feedback and verified examples: recording a click (last click wins), finding the answer a chat message
is, proposing an example from an answer, and the admin's review of examples and of 👎 answers.

Who may review is decided by the caller (the CLI boundary checks the admin role); who may see an example is
decided where examples are used (workers/turns/examples.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from core.store.models import AnswerFeedback, Conversation, Note, OutboxMessage, Turn, VerifiedExample
from core.store.models.base import utcnow


def turn_for_message(session: Session, platform: str, channel_id: str, message_id: str) -> Turn | None:
    """The turn whose answer is chat message `message_id` in `channel_id` (Slack ts, Teams activity id)."""
    stmt = (
        select(Turn)
        .join(OutboxMessage, OutboxMessage.turn_id == Turn.id)
        .join(Conversation, Conversation.id == Turn.conversation_id)
        .where(OutboxMessage.kind == "answer", OutboxMessage.message_id == message_id)
        .where(Conversation.platform == platform, Conversation.channel_id == channel_id)
    )
    return session.scalars(stmt).first()


def record(session: Session, turn_id: int, platform: str, user_id: str, rating: str) -> AnswerFeedback:
    """Store `rating` for the turn and user; a later click replaces the earlier one (and its reason)."""
    now = utcnow()
    stmt = (
        insert(AnswerFeedback)
        .values(turn_id=turn_id, user_platform=platform, user_id=user_id, rating=rating, updated_at=now)
        .on_conflict_do_update(
            index_elements=["turn_id", "user_platform", "user_id"],
            set_={"rating": rating, "reason": None, "updated_at": now},
        )
        .returning(AnswerFeedback.id)
    )
    feedback_id = session.execute(stmt).scalar_one()
    row = session.get(AnswerFeedback, feedback_id, populate_existing=True)
    assert row is not None
    return row


def set_reason(session: Session, turn_id: int, platform: str, user_id: str, reason: str) -> bool:
    """The reason for the user's 👎 on the turn; False when there is no 👎 of theirs to attach it to."""
    row = session.scalars(
        select(AnswerFeedback).where(
            AnswerFeedback.turn_id == turn_id,
            AnswerFeedback.user_platform == platform,
            AnswerFeedback.user_id == user_id,
        )
    ).first()
    if row is None or row.rating != "bad":
        return False
    row.reason, row.updated_at = reason, utcnow()
    return True


def example_for_turn(session: Session, turn_id: int) -> VerifiedExample | None:
    return session.scalars(select(VerifiedExample).where(VerifiedExample.turn_id == turn_id)).first()


def add_example(
    session: Session,
    *,
    turn_id: int | None,
    question: str,
    database: str,
    sql: str,
    tables: Sequence[str],
    platform: str,
    user_id: str,
) -> VerifiedExample:
    example = VerifiedExample(
        turn_id=turn_id,
        question=question,
        database=database,
        sql=sql,
        tables=list(tables),
        proposed_by_platform=platform,
        proposed_by=user_id,
    )
    session.add(example)
    session.flush()
    return example


def examples(session: Session, status: str | None = None) -> list[VerifiedExample]:
    stmt = select(VerifiedExample).order_by(VerifiedExample.id)
    if status:
        stmt = stmt.where(VerifiedExample.status == status)
    return list(session.scalars(stmt))


def get_example(session: Session, example_id: int) -> VerifiedExample | None:
    return session.get(VerifiedExample, example_id)


def review_example(
    session: Session, example: VerifiedExample, status: str, reviewer: str, changes: dict[str, Any] | None = None
) -> None:
    for name, value in (changes or {}).items():
        setattr(example, name, value)
    example.status, example.reviewed_by, example.reviewed_at = status, reviewer, utcnow()


def delete_example(session: Session, example_id: int) -> bool:
    return bool(session.execute(delete(VerifiedExample).where(VerifiedExample.id == example_id)).rowcount)  # type: ignore[attr-defined]


def nearest_approved(
    session: Session, embedding: Sequence[float], databases: Sequence[str], limit: int
) -> list[tuple[VerifiedExample, float]]:
    """Approved examples on `databases`, nearest to `embedding` first, with their cosine similarity."""
    distance = VerifiedExample.embedding.cosine_distance(list(embedding))
    stmt = (
        select(VerifiedExample, distance)
        .where(
            VerifiedExample.status == "approved",
            VerifiedExample.embedding.is_not(None),
            VerifiedExample.database.in_(list(databases)),
        )
        .order_by(distance)
        .limit(limit)
    )
    return [(row[0], 1.0 - float(row[1])) for row in session.execute(stmt)]


@dataclass(frozen=True)
class BadAnswer:
    turn_id: int
    user_platform: str
    user_id: str
    question: str
    answer: str
    reason: str | None
    at: datetime
    channel_id: str
    private: bool


def bad_answers(session: Session, limit: int = 100) -> list[BadAnswer]:
    """👎 answers, newest first."""
    stmt = (
        select(AnswerFeedback, Turn, Conversation)
        .join(Turn, Turn.id == AnswerFeedback.turn_id)
        .join(Conversation, Conversation.id == Turn.conversation_id)
        .where(AnswerFeedback.rating == "bad")
        .order_by(AnswerFeedback.updated_at.desc(), AnswerFeedback.id.desc())
        .limit(limit)
    )
    return [
        BadAnswer(
            turn_id=turn.id,
            user_platform=feedback.user_platform,
            user_id=feedback.user_id,
            question=turn.question,
            answer=turn.answer or "",
            reason=feedback.reason,
            at=feedback.updated_at,
            channel_id=conversation.channel_id,
            private=conversation.private,
        )
        for feedback, turn, conversation in session.execute(stmt).tuples()
    ]


def channel_notes(session: Session, limit: int = 100) -> list[Note]:
    """Live notes saved in channels (not private ones), newest first: what others will be shown."""
    stmt = (
        select(Note)
        .where(Note.deleted_at.is_(None), Note.private.is_(False))
        .order_by(Note.created_at.desc(), Note.id.desc())
        .limit(limit)
    )
    return list(session.scalars(stmt))


def any_approved(session: Session) -> bool:
    """Whether any approved example exists (a cheap check before embedding a question for examples)."""
    stmt = select(VerifiedExample.id).where(VerifiedExample.status == "approved").limit(1)
    return session.scalar(stmt) is not None
