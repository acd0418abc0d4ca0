"""Search index: HNSW over chunk embeddings, embeddings of notes and of database summaries.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 21:10:00
"""

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("notes", sa.Column("embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=True))
    op.add_column("sources", sa.Column("summary_embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=True))
    op.create_index(
        "ix_search_chunks_embedding",
        "search_chunks",
        ["embedding"],
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )


def downgrade() -> None:
    op.drop_index("ix_search_chunks_embedding", table_name="search_chunks")
    op.drop_column("sources", "summary_embedding")
    op.drop_column("notes", "embedding")
