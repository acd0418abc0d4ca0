"""Turns: what a message asks for (a question or a note), who holds the turn's lease, the tables it used and
the structured result (every SQL it ran, with its rows) that the console and chat adapters render.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 23:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("turns", sa.Column("intent", sa.String(10), server_default="question", nullable=False))
    op.create_check_constraint(op.f("ck_turns_intent"), "turns", "intent IN ('question', 'note')")
    op.add_column("turns", sa.Column("lease_owner", sa.String(200), nullable=True))
    op.add_column(
        "turns",
        sa.Column("tables_used", sa.ARRAY(sa.String(300)), server_default="{}", nullable=False),
    )
    op.add_column("turns", sa.Column("result", postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column("turns", "result")
    op.drop_column("turns", "tables_used")
    op.drop_column("turns", "lease_owner")
    op.drop_constraint(op.f("ck_turns_intent"), "turns", type_="check")
    op.drop_column("turns", "intent")
