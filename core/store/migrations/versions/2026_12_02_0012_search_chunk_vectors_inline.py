"""Search at scale: chunk vectors stored in the row (no TOAST read per chunk in an exact scan) and an index of the
visible tables per source (search filters chunks by it without reading the table cards).

Existing vectors are rewritten so they move into the row; the HNSW index is dropped first and built once afterwards
(in memory, which is several times faster than keeping it up to date row by row).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Memory for building the HNSW graph in one go (about 1.7 KB per chunk: 350,000 chunks fit in 600 MB).
BUILD_MEMORY = "1GB"


def _rebuild_vectors(storage: str) -> None:
    op.drop_index("ix_search_chunks_embedding", table_name="search_chunks")
    op.execute(f"ALTER TABLE search_chunks ALTER COLUMN embedding SET STORAGE {storage}")
    # A new value of each vector (an unchanged one would keep its TOAST pointer) is stored the new way.
    op.execute("UPDATE search_chunks SET embedding = embedding::text::vector WHERE embedding IS NOT NULL")
    op.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
    op.create_index(
        "ix_search_chunks_embedding",
        "search_chunks",
        ["embedding"],
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )


def upgrade() -> None:
    _rebuild_vectors("PLAIN")
    op.create_index(
        "ix_source_tables_visible", "source_tables", ["source_id", "id"], postgresql_where=sa.text("visible")
    )


def downgrade() -> None:
    op.drop_index("ix_source_tables_visible", table_name="source_tables")
    _rebuild_vectors("EXTERNAL")
