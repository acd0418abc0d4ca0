"""Table facts: what analysis measured (row count, newest dates, key samples), kept for incremental runs.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("source_tables", sa.Column("facts", postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column("source_tables", "facts")
