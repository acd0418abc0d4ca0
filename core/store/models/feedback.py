"""What people said about answers: 👍/👎 per turn and user (last click wins, with an optional reason), and the
verified examples a 👍 from the asker proposes (question, database, SQL, the tables it reads), which an admin
approves, edits or rejects before the model ever sees them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ARRAY, CheckConstraint, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from core.store.models.base import Base, created_at_column
from core.store.models.catalog import EMBEDDING_DIMENSIONS
from core.store.vectors import Vector

RATINGS = ("good", "bad")
EXAMPLE_STATUSES = ("proposed", "approved", "rejected")


class AnswerFeedback(Base):
    __tablename__ = "answer_feedback"
    __table_args__ = (
        UniqueConstraint("turn_id", "user_platform", "user_id"),
        CheckConstraint(f"rating IN ({', '.join(repr(r) for r in RATINGS)})", name="rating"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    user_platform: Mapped[str] = mapped_column(String(20))
    user_id: Mapped[str] = mapped_column(String(128))
    rating: Mapped[str] = mapped_column(String(10))
    reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = created_at_column()


class VerifiedExample(Base):
    __tablename__ = "verified_examples"
    __table_args__ = (
        UniqueConstraint("turn_id"),
        CheckConstraint(f"status IN ({', '.join(repr(s) for s in EXAMPLE_STATUSES)})", name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    #: The answer that proposed it (NULL once that turn is deleted, or for an example added by an admin).
    turn_id: Mapped[int | None] = mapped_column(ForeignKey("turns.id", ondelete="SET NULL"))
    question: Mapped[str] = mapped_column(Text)
    database: Mapped[str] = mapped_column(String(63))
    sql: Mapped[str] = mapped_column(Text)
    #: Tables the SQL reads, as "TABLE" or "schema.TABLE" names within `database`.
    tables: Mapped[list[str]] = mapped_column(ARRAY(String(300)), default=list, server_default="{}")
    status: Mapped[str] = mapped_column(String(10), default="proposed", server_default="proposed")
    proposed_by_platform: Mapped[str] = mapped_column(String(20))
    proposed_by: Mapped[str] = mapped_column(String(128))
    proposed_at: Mapped[datetime] = created_at_column()
    reviewed_by: Mapped[str | None] = mapped_column(String(128))
    reviewed_at: Mapped[datetime | None]
    embedding: Mapped[list[float] | None] = mapped_column(Vector(EMBEDDING_DIMENSIONS))
