"""Conversations, turns, rounds, tool calls and the audit of every SQL statement that ran."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from core.store.models.base import Base, created_at_column

TURN_STATUSES = ("queued", "running", "answered", "partial", "failed")
TURN_INTENTS = ("question", "note")


class Conversation(Base):
    __tablename__ = "conversations"
    __table_args__ = (UniqueConstraint("platform", "workspace_id", "channel_id", "thread_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))
    workspace_id: Mapped[str] = mapped_column(String(128), default="", server_default="")
    channel_id: Mapped[str] = mapped_column(String(128))
    thread_id: Mapped[str] = mapped_column(String(128), default="", server_default="")
    private: Mapped[bool] = mapped_column(default=False, server_default="false")
    reference: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = created_at_column()


class Turn(Base):
    __tablename__ = "turns"
    __table_args__ = (
        CheckConstraint(f"status IN ({', '.join(repr(s) for s in TURN_STATUSES)})", name="status"),
        CheckConstraint(f"intent IN ({', '.join(repr(s) for s in TURN_INTENTS)})", name="intent"),
        Index("ix_turns_unfinished", "id", postgresql_where=text("status IN ('queued', 'running')")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    user_platform: Mapped[str] = mapped_column(String(20))
    user_id: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(20), default="queued", server_default="queued")
    question: Mapped[str] = mapped_column(Text)
    intent: Mapped[str] = mapped_column(String(10), default="question", server_default="question")
    pins: Mapped[list[str]] = mapped_column(ARRAY(String(63)), default=list, server_default="{}")
    answer: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    #: Times the sweep queued the turn again because its job was lost, and when it last did.
    requeues: Mapped[int] = mapped_column(default=0, server_default="0")
    requeued_at: Mapped[datetime | None]
    lease_until: Mapped[datetime | None]
    lease_owner: Mapped[str | None] = mapped_column(String(200))
    tables_used: Mapped[list[str]] = mapped_column(ARRAY(String(300)), default=list, server_default="{}")
    usage: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    queued_at: Mapped[datetime] = created_at_column()
    started_at: Mapped[datetime | None]
    first_model_call_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


class Round(Base):
    __tablename__ = "rounds"
    __table_args__ = (UniqueConstraint("turn_id", "ordinal"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int]
    model: Mapped[str] = mapped_column(String(200))
    stop_reason: Mapped[str | None] = mapped_column(String(40))
    text: Mapped[str | None] = mapped_column(Text)
    input_tokens: Mapped[int | None]
    output_tokens: Mapped[int | None]
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


class ToolCall(Base):
    __tablename__ = "tool_calls"
    __table_args__ = (UniqueConstraint("round_id", "ordinal"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int]
    tool: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[dict[str, Any]] = mapped_column(JSONB)
    result_text: Mapped[str | None] = mapped_column(Text)
    result_chars: Mapped[int] = mapped_column(default=0)
    error: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[float | None]


class ExecutedSql(Base):
    """Audit of every statement sent to a source database, allowed or refused."""

    __tablename__ = "executed_sql"

    id: Mapped[int] = mapped_column(primary_key=True)
    turn_id: Mapped[int | None] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    tool_call_id: Mapped[int | None] = mapped_column(ForeignKey("tool_calls.id", ondelete="SET NULL"))
    source_id: Mapped[int | None] = mapped_column(ForeignKey("sources.id", ondelete="SET NULL"))
    user_platform: Mapped[str | None] = mapped_column(String(20))
    user_id: Mapped[str | None] = mapped_column(String(128))
    sql: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    row_count: Mapped[int | None]
    truncated: Mapped[bool] = mapped_column(default=False)
    duration_ms: Mapped[float | None]
    error: Mapped[str | None] = mapped_column(Text)
    #: The statement as rewritten for the user's row filters and column masks (placeholders for bound values), and
    #: which filters and masks applied; both NULL when none did.
    sql_run: Mapped[str | None] = mapped_column(Text)
    policies: Mapped[str | None] = mapped_column(Text)
    executed_at: Mapped[datetime] = created_at_column()
