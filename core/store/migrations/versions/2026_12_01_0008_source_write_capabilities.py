"""Sources: what the source's account can do beyond reading (superuser, file writes, table writes, ...), as
checked when the source was added and at each analysis; NULL where it was never checked.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("sources", sa.Column("write_capabilities", postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column("sources", "write_capabilities")
