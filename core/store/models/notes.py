"""Table notes ("remember this"): knowledge users leave about tables, with where and by whom it was said."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from core.store.models.base import Base, created_at_column
from core.store.models.catalog import EMBEDDING_DIMENSIONS
from core.store.vectors import Vector


class Note(Base):
    __tablename__ = "notes"
    __table_args__ = (Index("ix_notes_tsv", "tsv", postgresql_using="gin"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    author_platform: Mapped[str] = mapped_column(String(20))
    author_id: Mapped[str] = mapped_column(String(128))
    workspace_id: Mapped[str | None] = mapped_column(String(128))
    channel_id: Mapped[str | None] = mapped_column(String(128))
    thread_id: Mapped[str | None] = mapped_column(String(128))
    private: Mapped[bool] = mapped_column(default=False, server_default="false")
    created_at: Mapped[datetime] = created_at_column()
    edited_at: Mapped[datetime | None]
    deleted_at: Mapped[datetime | None]
    tsv: Mapped[Any] = mapped_column(TSVECTOR)
    embedding: Mapped[list[float] | None] = mapped_column(Vector(EMBEDDING_DIMENSIONS))


class NoteTable(Base):
    """A note is attached to one or more tables."""

    __tablename__ = "note_tables"

    note_id: Mapped[int] = mapped_column(ForeignKey("notes.id", ondelete="CASCADE"), primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("source_tables.id", ondelete="CASCADE"), primary_key=True)
