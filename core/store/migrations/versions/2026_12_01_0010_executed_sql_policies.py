"""Executed SQL: the statement as rewritten for the user's row filters and column masks, and which of them applied.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 10:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("executed_sql", sa.Column("sql_run", sa.Text(), nullable=True))
    op.add_column("executed_sql", sa.Column("policies", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("executed_sql", "policies")
    op.drop_column("executed_sql", "sql_run")
