"""Value search: distinct short text values of columns from the profiling sample, with a full-text index.

Revision ID: 0014
Revises: 0012
Create Date: 2026-12-02 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "search_values",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("source_id", sa.Integer(), sa.ForeignKey("sources.id", ondelete="CASCADE"), nullable=False),
        sa.Column("table_id", sa.Integer(), sa.ForeignKey("source_tables.id", ondelete="CASCADE"), nullable=False),
        sa.Column("column_name", sa.String(128), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("tsv", postgresql.TSVECTOR(), nullable=False),
    )
    op.create_index("ix_search_values_source_id", "search_values", ["source_id"])
    op.create_index("ix_search_values_table_id", "search_values", ["table_id"])
    op.create_index("ix_search_values_tsv", "search_values", ["tsv"], postgresql_using="gin")


def downgrade() -> None:
    op.drop_table("search_values")
