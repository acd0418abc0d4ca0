"""Migration 0012: chunk vectors move into the row (an exact scan reads no TOAST), values unchanged, and back."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, text

from core.store import migrate
from core.store.embedded import EmbeddedServer
from tests.conftest import create_scratch_database

#: pg_column_size of a vector(384) kept in the row counts its 4-byte header; of one moved to TOAST, only the data.
IN_ROW = 4 * 384 + 8
IN_TOAST = IN_ROW - 4


@pytest.fixture
def engine(store_server: EmbeddedServer) -> Iterator[Engine]:
    made = create_engine(create_scratch_database(store_server.url, "ts_vec"))
    yield made
    made.dispose()


def _stored(engine: Engine) -> tuple[int, str, str]:
    with engine.connect() as conn:
        row = conn.execute(
            text(
                "SELECT pg_column_size(embedding), embedding::text, "
                "(SELECT attstorage FROM pg_attribute WHERE attrelid = 'search_chunks'::regclass "
                "AND attname = 'embedding') FROM search_chunks"
            )
        ).one()
    return int(row[0]), str(row[1]), str(row[2])


def test_vectors_stored_out_of_line_move_into_the_row_and_back(engine: Engine) -> None:
    migrate.upgrade(engine, "0011")
    vector = "[" + ",".join(f"{(i % 17) / 17 - 0.5:.6f}" for i in range(384)) + "]"
    filler = os.urandom(300).hex()  # incompressible: with it the row is too large to keep the vector inline
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO sources (name, engine, url_ref) VALUES ('v', 'sqlite', 'sqlite://')"))
        conn.execute(text("INSERT INTO source_tables (source_id, name) SELECT id, 'T' FROM sources"))
        conn.execute(
            text(
                "INSERT INTO search_chunks (table_id, source_id, kind, ordinal, text, embedding, tsv) "
                "SELECT t.id, t.source_id, 'head', 0, :filler, CAST(:vector AS vector), to_tsvector('simple', 'x') "
                "FROM source_tables t"
            ),
            {"filler": filler, "vector": vector},
        )
    size, before, storage = _stored(engine)
    assert (size, storage) == (IN_TOAST, "e")  # out of line: every exact scan fetched it from TOAST
    migrate.upgrade(engine)
    size, after, storage = _stored(engine)
    assert (size, storage, after) == (IN_ROW, "p", before)
    with engine.connect() as conn:
        indexes = conn.scalars(text("SELECT indexname FROM pg_indexes WHERE tablename = 'search_chunks'")).all()
    assert "ix_search_chunks_embedding" in indexes
    migrate.downgrade(engine, "0011")
    _, again, storage = _stored(engine)
    assert (storage, again) == ("e", before)
