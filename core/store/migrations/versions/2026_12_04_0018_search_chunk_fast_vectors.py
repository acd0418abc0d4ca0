"""Two-speed indexing (`search.refinement`): a chunk written by the fast pass holds the static encoder's vector in
`fast_embedding` and no `embedding` until refinement makes it; stored in the row like the others (no TOAST read
per chunk in an exact scan). The partial index holds the chunks still waiting for their vector, by source: the
refinement's next batch, a search's check for them and their exact scan read it alone, and it is empty once
every chunk is refined.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 19:00:00
"""

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("search_chunks", sa.Column("fast_embedding", pgvector.sqlalchemy.Vector(384), nullable=True))
    op.execute("ALTER TABLE search_chunks ALTER COLUMN fast_embedding SET STORAGE PLAIN")
    op.create_index(
        "ix_search_chunks_unrefined",
        "search_chunks",
        ["source_id", "id"],
        postgresql_where=sa.text("embedding IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_search_chunks_unrefined", table_name="search_chunks")
    op.drop_column("search_chunks", "fast_embedding")
