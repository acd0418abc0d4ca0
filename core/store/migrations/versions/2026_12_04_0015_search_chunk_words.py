"""Words per source's chunks, for BM25: the corpus mean length is read from the sources, not counted per search.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04 03:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("sources", sa.Column("chunk_words", sa.BigInteger(), server_default="0", nullable=False))
    op.execute(
        "UPDATE sources s SET chunk_words = coalesce((SELECT sum(length(c.tsv)) FROM search_chunks c "
        "JOIN source_tables t ON t.id = c.table_id WHERE t.source_id = s.id AND t.visible), 0)"
    )


def downgrade() -> None:
    op.drop_column("sources", "chunk_words")
