"""Answer feedback (👍/👎 per turn and user, with an optional reason) and verified examples (question, database,
SQL and tables an admin approves, with an embedding for retrieval).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 11:00:00
"""

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "answer_feedback",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("turn_id", sa.Integer(), sa.ForeignKey("turns.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_platform", sa.String(20), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("rating", sa.String(10), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.UniqueConstraint("turn_id", "user_platform", "user_id"),
        sa.CheckConstraint("rating IN ('good', 'bad')", name="rating"),
    )
    op.create_index("ix_answer_feedback_turn_id", "answer_feedback", ["turn_id"])
    op.create_table(
        "verified_examples",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("turn_id", sa.Integer(), sa.ForeignKey("turns.id", ondelete="SET NULL"), nullable=True),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("database", sa.String(63), nullable=False),
        sa.Column("sql", sa.Text(), nullable=False),
        sa.Column("tables", postgresql.ARRAY(sa.String(300)), server_default="{}", nullable=False),
        sa.Column("status", sa.String(10), server_default="proposed", nullable=False),
        sa.Column("proposed_by_platform", sa.String(20), nullable=False),
        sa.Column("proposed_by", sa.String(128), nullable=False),
        sa.Column("proposed_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("reviewed_by", sa.String(128), nullable=True),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("embedding", pgvector.sqlalchemy.Vector(384), nullable=True),
        sa.UniqueConstraint("turn_id"),
        sa.CheckConstraint("status IN ('proposed', 'approved', 'rejected')", name="status"),
    )


def downgrade() -> None:
    op.drop_table("verified_examples")
    op.drop_index("ix_answer_feedback_turn_id", table_name="answer_feedback")
    op.drop_table("answer_feedback")
