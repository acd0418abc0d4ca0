"""Code meanings in the value index: a code column's codes are kept with what each means (`meaning`), and the
meaning is what the full-text vector holds, so a question naming a meaning ("credit card") finds the table whose
code column holds its code, not only the code table that spells it out. Rows without a meaning are plain values.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("search_values", sa.Column("meaning", sa.Text(), nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM search_values WHERE meaning IS NOT NULL")
    op.drop_column("search_values", "meaning")
