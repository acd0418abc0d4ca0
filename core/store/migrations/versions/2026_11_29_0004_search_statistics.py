"""Search statistics: chunks per source (to choose exact or HNSW scans), words too common to search for, and
the source of each chunk (so a pinned search reads only that database's chunks).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 22:15:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("search_chunks", sa.Column("source_id", sa.Integer(), nullable=True))
    op.create_foreign_key(
        op.f("fk_search_chunks_source_id_sources"),
        "search_chunks",
        "sources",
        ["source_id"],
        ["id"],
        ondelete="CASCADE",
    )
    op.execute("UPDATE search_chunks c SET source_id = t.source_id FROM source_tables t WHERE t.id = c.table_id")
    op.create_index(op.f("ix_search_chunks_source_id"), "search_chunks", ["source_id"])
    op.add_column("sources", sa.Column("chunk_count", sa.Integer(), server_default="0", nullable=False))
    op.create_table(
        "search_common_words",
        sa.Column("word", sa.Text(), nullable=False),
        sa.Column("documents", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("word", name=op.f("pk_search_common_words")),
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_search_chunks_source_id"), table_name="search_chunks")
    op.drop_constraint(op.f("fk_search_chunks_source_id_sources"), "search_chunks", type_="foreignkey")
    op.drop_column("search_chunks", "source_id")
    op.drop_table("search_common_words")
    op.drop_column("sources", "chunk_count")
