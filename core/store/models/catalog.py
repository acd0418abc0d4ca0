"""What analysis learns about source databases: sources, tables, columns, join candidates and search chunks."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.orm import Mapped, column_property, mapped_column

from core.store.models.base import Base, created_at_column
from core.store.vectors import Vector

EMBEDDING_DIMENSIONS = 384
TABLE_ROLES = ("live", "backup", "draft", "staging", "snapshot", "partition", "log", "view")


def _card_column(attribute: Any) -> Any:
    """The Column behind a `mapped_column` while its class is being declared (for a column property over it)."""
    return attribute.column


class Source(Base):
    """A registered source database. `url_ref` never holds a password: it is the URL with secrets masked."""

    __tablename__ = "sources"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(63), unique=True)
    aliases: Mapped[list[str]] = mapped_column(ARRAY(String(63)), default=list, server_default="{}")
    engine: Mapped[str] = mapped_column(String(40))
    engine_version: Mapped[str | None] = mapped_column(String(200))
    url_ref: Mapped[str] = mapped_column(Text)
    summary: Mapped[str | None] = mapped_column(Text)
    summary_embedding: Mapped[list[float] | None] = mapped_column(Vector(EMBEDDING_DIMENSIONS))
    chunk_count: Mapped[int] = mapped_column(default=0, server_default="0")
    #: Distinct words summed over those chunks (`length(tsv)`): BM25's mean document length.
    chunk_words: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    #: What the account can do beyond reading (catalog.account_check labels); [] read-only, None never checked.
    write_capabilities: Mapped[list[str] | None] = mapped_column(JSONB)
    analysed_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = created_at_column()


class SourceTable(Base):
    """One table or view of a source. Invisible tables stay (with their notes) but leave search."""

    __tablename__ = "source_tables"
    __table_args__ = (
        UniqueConstraint("source_id", "schema_name", "name"),
        CheckConstraint(f"role IN ({', '.join(repr(r) for r in TABLE_ROLES)})", name="role"),
        # The visible tables of the searched databases, read from the index alone (search filters chunks by it).
        Index("ix_source_tables_visible", "source_id", "id", postgresql_where=text("visible")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"), index=True)
    schema_name: Mapped[str] = mapped_column(String(128), default="", server_default="")
    name: Mapped[str] = mapped_column(String(128))
    role: Mapped[str] = mapped_column(String(20), default="live", server_default="live")
    copy_of_id: Mapped[int | None] = mapped_column(ForeignKey("source_tables.id", ondelete="SET NULL"))
    copy_evidence: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    visible: Mapped[bool] = mapped_column(default=True, server_default="true")
    row_count: Mapped[int | None] = mapped_column(BigInteger)
    row_count_exact: Mapped[bool] = mapped_column(default=False, server_default="false")
    card: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # What deciding whether a reader may see the table needs from its card (a view is seen only with every table
    # it reads), read with the row even when the card itself is left unread (`Principal.may_see_table`).
    card_kind: Mapped[str | None] = column_property(_card_column(card)["kind"].astext)
    view_reads: Mapped[Any] = column_property(_card_column(card)["reads"])
    card_text: Mapped[str | None] = mapped_column(Text)
    fingerprint: Mapped[str | None] = mapped_column(String(64))
    facts: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    skipped_reason: Mapped[str | None] = mapped_column(Text)
    analysed_at: Mapped[datetime | None]
    invisible_since: Mapped[datetime | None]
    created_at: Mapped[datetime] = created_at_column()


class TableColumn(Base):
    __tablename__ = "table_columns"
    __table_args__ = (UniqueConstraint("table_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("source_tables.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int]
    name: Mapped[str] = mapped_column(String(128))
    data_type: Mapped[str] = mapped_column(String(200))
    nullable: Mapped[bool] = mapped_column(default=True)
    key_role: Mapped[str | None] = mapped_column(String(20))
    comment: Mapped[str | None] = mapped_column(Text)
    profile: Mapped[dict[str, Any] | None] = mapped_column(JSONB)


class JoinCandidate(Base):
    """A way two tables join: a declared foreign key, or an inferred candidate with its basis and confidence."""

    __tablename__ = "join_candidates"
    __table_args__ = (
        CheckConstraint("kind IN ('declared', 'inferred')", name="kind"),
        CheckConstraint("confidence >= 0 AND confidence <= 1", name="confidence"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"), index=True)
    from_table_id: Mapped[int] = mapped_column(ForeignKey("source_tables.id", ondelete="CASCADE"), index=True)
    from_columns: Mapped[list[str]] = mapped_column(ARRAY(String(128)))
    to_table_id: Mapped[int] = mapped_column(ForeignKey("source_tables.id", ondelete="CASCADE"), index=True)
    to_columns: Mapped[list[str]] = mapped_column(ARRAY(String(128)))
    kind: Mapped[str] = mapped_column(String(10))
    basis: Mapped[str] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Float)


class SearchChunk(Base):
    """A searchable piece of a table card: the head, or a block of columns."""

    __tablename__ = "search_chunks"
    __table_args__ = (
        UniqueConstraint("table_id", "kind", "ordinal"),
        CheckConstraint("kind IN ('head', 'columns')", name="kind"),
        Index("ix_search_chunks_tsv", "tsv", postgresql_using="gin"),
        Index(
            "ix_search_chunks_embedding",
            "embedding",
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 64},
            postgresql_ops={"embedding": "vector_cosine_ops"},
        ),
        # The chunks still waiting for their vector (search.refinement; migration 0018), by source.
        Index("ix_search_chunks_unrefined", "source_id", "id", postgresql_where=text("embedding IS NULL")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("source_tables.id", ondelete="CASCADE"), index=True)
    # The table's source, repeated here so a search pinned to one database reads only that database's chunks.
    source_id: Mapped[int | None] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(10))
    ordinal: Mapped[int]
    text: Mapped[str] = mapped_column(Text)
    # Stored in the row itself (STORAGE PLAIN, migration 0012), so an exact scan reads no TOAST.
    embedding: Mapped[list[float] | None] = mapped_column(Vector(EMBEDDING_DIMENSIONS))
    # The same text in the multilingual space (search.multilingual; migration 0016), for questions in other scripts;
    # NULL until it is made, and again whenever the text changes.
    ml_embedding: Mapped[list[float] | None] = mapped_column(Vector(EMBEDDING_DIMENSIONS))
    # The fast encoder's vector (search.encoder_static; migration 0018) while `embedding` is NULL: written by the fast
    # pass of indexing, cleared when refinement (search.refinement) writes `embedding`.
    fast_embedding: Mapped[list[float] | None] = mapped_column(Vector(EMBEDDING_DIMENSIONS))
    tsv: Mapped[Any] = mapped_column(TSVECTOR)


class CommonWord(Base):
    """Words in so many chunks that matching them says little; full-text queries leave them out."""

    __tablename__ = "search_common_words"

    word: Mapped[str] = mapped_column(Text, primary_key=True)
    documents: Mapped[int]


class SearchValue(Base):
    """A distinct short text value of a column, from the profiling sample: "Busan" finds the table that holds it."""

    __tablename__ = "search_values"
    __table_args__ = (Index("ix_search_values_tsv", "tsv", postgresql_using="gin"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"), index=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("source_tables.id", ondelete="CASCADE"), index=True)
    column_name: Mapped[str] = mapped_column(String(128))
    value: Mapped[str] = mapped_column(Text)
    tsv: Mapped[Any] = mapped_column(TSVECTOR)
