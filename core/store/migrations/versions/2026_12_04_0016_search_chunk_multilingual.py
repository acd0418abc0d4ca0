"""A second vector per chunk in a multilingual space: questions written in another script are searched by it
(`search.multilingual`). Empty until the source is next analysed, which fills it; stored in the row like
the first (no TOAST read per chunk in an exact scan).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04 06:10:00
"""

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("search_chunks", sa.Column("ml_embedding", pgvector.sqlalchemy.Vector(384), nullable=True))
    op.execute("ALTER TABLE search_chunks ALTER COLUMN ml_embedding SET STORAGE PLAIN")


def downgrade() -> None:
    op.drop_column("search_chunks", "ml_embedding")
