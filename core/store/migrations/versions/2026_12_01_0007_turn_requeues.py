"""Turns: how often the sweep queued a turn again after its job was lost (and when it last did), and a partial index
over the unfinished turns the sweep reads every interval.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 09:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("turns", sa.Column("requeues", sa.Integer(), server_default="0", nullable=False))
    op.add_column("turns", sa.Column("requeued_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_turns_unfinished", "turns", ["id"], postgresql_where=sa.text("status IN ('queued', 'running')"))


def downgrade() -> None:
    op.drop_index("ix_turns_unfinished", table_name="turns")
    op.drop_column("turns", "requeued_at")
    op.drop_column("turns", "requeues")
