"""Finding stored conversations: the thread a turn answers in, and a chat thread by its platform ids.

A conversation is created by `turns.conversation` (insert on conflict); these are the reads around it. A thread
is named by (platform, workspace, channel, thread); a caller that does not know the workspace (bolt's assistant
thread context store is given only the channel and thread) leaves `workspace_id` None and gets the first match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from core.store.models import Conversation, Turn

Selected = TypeVar("Selected")


@dataclass(frozen=True)
class TurnThread:
    """Where a turn's messages go: its conversation's platform, channel, thread and stored reference."""

    platform: str
    channel_id: str
    thread_id: str
    reference: dict[str, Any] | None


def thread_of_turn(session: Session, turn_id: int) -> TurnThread | None:
    """The thread turn `turn_id` belongs to; None when the turn does not exist."""
    row = session.execute(
        select(Conversation.platform, Conversation.channel_id, Conversation.thread_id, Conversation.reference)
        .join(Turn, Turn.conversation_id == Conversation.id)
        .where(Turn.id == turn_id)
    ).first()
    return None if row is None else TurnThread(row.platform, row.channel_id, row.thread_id, row.reference)


def _in_thread(
    stmt: Select[Selected], platform: str, channel_id: str, thread_id: str, workspace_id: str | None
) -> Select[Selected]:
    stmt = stmt.where(
        Conversation.platform == platform, Conversation.channel_id == channel_id, Conversation.thread_id == thread_id
    )
    return stmt if workspace_id is None else stmt.where(Conversation.workspace_id == workspace_id)


def in_thread(
    session: Session, *, platform: str, channel_id: str, thread_id: str, workspace_id: str | None = None
) -> Conversation | None:
    """The conversation of the thread (any workspace's when `workspace_id` is None), or None."""
    stmt = _in_thread(select(Conversation), platform, channel_id, thread_id, workspace_id)
    return session.scalars(stmt).first()


def reference_in_thread(
    session: Session, *, platform: str, channel_id: str, thread_id: str, workspace_id: str | None = None
) -> dict[str, Any] | None:
    """The stored reference of the thread's conversation (None when there is none, or no such conversation)."""
    stmt = _in_thread(select(Conversation.reference), platform, channel_id, thread_id, workspace_id)
    reference = session.scalar(stmt)
    return reference if isinstance(reference, dict) else None


def turn_count(session: Session, conversation_id: int) -> int:
    """How many turns the conversation has."""
    return int(session.scalar(select(func.count()).where(Turn.conversation_id == conversation_id)) or 0)
