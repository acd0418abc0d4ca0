"""A `ChunkWriter` writes the batches sent to it, from its own thread, as `insert_chunks` would have in one call; a
batch that fails is raised to the caller and the batches after it are not written; the caller's own error stops it."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from core.store.models import EMBEDDING_DIMENSIONS, SearchChunk, Source, SourceTable
from core.store.repositories.chunk_copy import ChunkWriter, insert_chunks


def _table(session: Session, name: str) -> tuple[int, int]:
    source = Source(name=name, engine="sqlite", url_ref="sqlite://")
    session.add(source)
    session.flush()
    table = SourceTable(source_id=source.id, name="ORD_MST")
    session.add(table)
    session.flush()
    return source.id, table.id


def _rows(source_id: int, table_id: int, count: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(5)
    return [
        {
            "table_id": table_id,
            "source_id": source_id,
            "kind": "columns",
            "ordinal": ordinal,
            "text": f"Table ORD_MST columns: part {ordinal}",
            "keywords": f"ORD_MST ord mst order master part{ordinal} O'Brien\ttab",
            "embedding": None,
            "fast_embedding": rng.standard_normal(EMBEDDING_DIMENSIONS).astype(np.float32),
        }
        for ordinal in range(count)
    ]


def _stored(session: Session, table_id: int) -> list[tuple[int, str, str, str]]:
    return [
        (int(ordinal), str(chunk_text), str(tsv), str(vector))
        for ordinal, chunk_text, tsv, vector in session.execute(
            select(SearchChunk.ordinal, SearchChunk.text, text("tsv::text"), text("fast_embedding::text"))
            .where(SearchChunk.table_id == table_id)
            .order_by(SearchChunk.ordinal)
        ).all()
    ]


def test_batches_sent_are_written_as_one_call_writes_them(session: Session) -> None:
    streamed_source, streamed = _table(session, "chunk_writer_streamed")
    direct_source, direct = _table(session, "chunk_writer_direct")
    rows = _rows(streamed_source, streamed, 12)
    with ChunkWriter(session) as writer:
        for start in range(0, 12, 5):
            writer.send(rows[start : start + 5])
        writer.send([])
    assert writer.written == 12
    insert_chunks(session, _rows(direct_source, direct, 12))
    written = _stored(session, streamed)
    assert [r[0] for r in written] == list(range(12))
    assert written == _stored(session, direct)
    assert session.scalar(text("SELECT count(*) FROM new_search_chunks")) == 0


def test_a_failed_batch_is_raised_and_the_batches_after_it_are_not_written(session: Session) -> None:
    source_id, table_id = _table(session, "chunk_writer_failing")
    rows = _rows(source_id, table_id, 6)
    missing = [dict(row, table_id=table_id + 10_000) for row in rows[2:4]]  # no such table: a foreign key fails
    writer = ChunkWriter(session)

    def send_all() -> None:
        with writer:
            writer.send(rows[:2])
            writer.send(missing)
            writer.send(rows[4:])

    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        send_all()
    assert writer.written == 2


def test_the_callers_error_leaves_the_writer_stopped_and_is_raised_unchanged(session: Session) -> None:
    source_id, table_id = _table(session, "chunk_writer_caller")
    rows = _rows(source_id, table_id, 4)
    writer = ChunkWriter(session)

    def fail_after_one_batch() -> None:
        with writer:
            writer.send(rows[:2])
            raise KeyError("the caller's")

    with pytest.raises(KeyError, match="the caller's"):
        fail_after_one_batch()
    assert writer.written <= 2
    assert session.scalar(text("SELECT 1")) == 1  # the connection is the caller's again
