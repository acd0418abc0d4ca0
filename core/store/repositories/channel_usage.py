"""Which databases a chat channel's questions use: the channel's own default, learned from its answered turns.

A Slack assistant thread takes the channel its user is viewing as context (bot/slack/assistant.py); the databases
that channel's recent questions pinned with `@database` or answered from rank first for the thread's questions and
prompts. Only the channel's shared threads count (never a direct message or a private thread), and the caller names
only databases the reader may query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.store.models import Conversation, Turn

#: `Conversation.reference["surface"]` of a Slack assistant thread (the agents and AI apps surface).
ASSISTANT_SURFACE = "assistant"
#: The channel's most recent answered questions that are counted.
RECENT_TURNS = 50
ANSWERED = ("answered", "partial")


def databases_asked_about(
    session: Session, *, platform: str, workspace_id: str, channel_id: str, limit: int = RECENT_TURNS
) -> list[str]:
    """The databases the channel's recent answered questions pinned or read, the most used first (ties by name);
    each question counts a database once."""
    if not channel_id:
        return []
    rows = session.execute(
        select(Turn.pins, Turn.tables_used)
        .join(Conversation, Conversation.id == Turn.conversation_id)
        .where(
            Conversation.platform == platform,
            Conversation.workspace_id == workspace_id,
            Conversation.channel_id == channel_id,
            Conversation.private.is_(False),
            Turn.status.in_(ANSWERED),
        )
        .order_by(Turn.id.desc())
        .limit(limit)
    ).all()
    counts: Counter[str] = Counter()
    for pins, tables_used in rows:
        used = set(pins or []) | {t.partition(".")[0] for t in tables_used or [] if "." in t}
        counts.update(used)
    return [name for name, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def viewed_channel(conversation: Conversation, user_id: str) -> str | None:
    """The channel the user of an assistant thread is viewing, as Slack sent it for that user; None for any other
    conversation, for a user who is not the thread's own, or when Slack sent no channel."""
    reference: Mapping[str, Any] = conversation.reference or {}
    if conversation.platform != "slack" or reference.get("surface") != ASSISTANT_SURFACE:
        return None
    if not user_id or reference.get("user_id") != user_id:
        return None
    context = reference.get("context")
    channel = context.get("channel_id") if isinstance(context, Mapping) else None
    if not isinstance(channel, str) or not channel or channel == conversation.channel_id:
        return None
    return channel
