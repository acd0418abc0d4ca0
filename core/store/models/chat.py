"""Delivery bookkeeping for chat platforms: events already processed, and the outbox of answers to post."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from core.store.models.base import Base, created_at_column


class ProcessedEvent(Base):
    """A chat event seen once; a redelivery with the same id finds this row and does nothing."""

    __tablename__ = "processed_events"

    platform: Mapped[str] = mapped_column(String(20), primary_key=True)
    event_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    turn_id: Mapped[int | None] = mapped_column(ForeignKey("turns.id", ondelete="SET NULL"))
    received_at: Mapped[datetime] = created_at_column()


class OutboxMessage(Base):
    """A message to post to a chat platform, written in the same transaction as what caused it."""

    __tablename__ = "outbox"
    __table_args__ = (
        UniqueConstraint("turn_id", "kind"),
        CheckConstraint("status IN ('pending', 'sent', 'failed')", name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    turn_id: Mapped[int | None] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[str] = mapped_column(String(20), default="pending", server_default="pending")
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at_column()
    sent_at: Mapped[datetime | None]
    #: The chat message this row became (Slack ts, Teams activity id): a retry edits it instead of posting again.
    message_id: Mapped[str | None] = mapped_column(String(256))
    updated_at: Mapped[datetime | None]
