"""Outbox: the chat message an outbox row became (Slack ts, Teams activity id), so a retried delivery edits that
message instead of posting a second one, and the status message a turn shows while it runs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 19:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("outbox", sa.Column("message_id", sa.String(256), nullable=True))
    op.add_column("outbox", sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("outbox", "updated_at")
    op.drop_column("outbox", "message_id")
