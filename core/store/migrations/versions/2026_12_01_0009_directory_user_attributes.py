"""Directory users: the profile attributes synced from Slack and Entra ID (department, city, employee id, custom
fields ...), which row filters bind as `{user.ATTR}`; empty for users synced before.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "directory_users",
        sa.Column("attributes", postgresql.JSONB(), server_default=sa.text("'{}'::jsonb"), nullable=False),
    )


def downgrade() -> None:
    op.drop_column("directory_users", "attributes")
