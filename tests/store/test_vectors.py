"""Vectors written by `core.store.vectors` land in the store as the same numbers pgvector's own conversion gave, and
new chunks copied in through a temporary table carry their text, vectors and full-text vector."""

from __future__ import annotations

import numpy as np
import pytest
from pgvector import Vector as PgVector
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from core.store.models import EMBEDDING_DIMENSIONS, SearchChunk, Source, SourceTable
from core.store.repositories.chunk_copy import insert_chunks
from core.store.vectors import vector_text


def test_nine_digits_give_back_every_32_bit_number() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((200, EMBEDDING_DIMENSIONS)).astype(np.float32)
    vectors[0, :4] = np.array([1e-38, -3.4e38, 0.1, 0.0], dtype=np.float32)
    for vector in vectors:
        written = vector_text(vector)
        assert written is not None
        back = np.array([np.float32(x) for x in written[1:-1].split(",")], dtype=np.float32)
        assert np.array_equal(back, vector)
    assert vector_text(None) is None
    assert vector_text([1, 2.5, -3]) == "[1,2.5,-3]"
    assert vector_text(PgVector([0.5, 1.25])) == "[0.5,1.25]"
    with pytest.raises(ValueError, match="one dimension"):
        vector_text([[1.0, 2.0]])


def test_the_store_keeps_the_numbers_pgvector_wrote(session: Session) -> None:
    rng = np.random.default_rng(11)
    sixty_four = [rng.standard_normal(EMBEDDING_DIMENSIONS).tolist() for _ in range(50)]  # not 32-bit numbers
    thirty_two = [v.tolist() for v in rng.standard_normal((50, EMBEDDING_DIMENSIONS)).astype(np.float32)]
    for vector in sixty_four + thirty_two:
        same = session.scalar(
            text("SELECT CAST(:ours AS vector)::text = CAST(:theirs AS vector)::text"),
            {"ours": vector_text(vector), "theirs": PgVector._to_db(vector)},
        )
        assert same is True


def test_new_chunks_are_copied_in_with_their_full_text_vector(session: Session) -> None:
    source = Source(name="vec_copy", engine="sqlite", url_ref="sqlite://")
    session.add(source)
    session.flush()
    table = SourceTable(source_id=source.id, name="ORD_MST")
    session.add(table)
    session.flush()
    rng = np.random.default_rng(3)
    rows = [
        {
            "table_id": table.id,
            "source_id": source.id,
            "kind": "columns",
            "ordinal": ordinal,
            "text": f"Table ORD_MST columns: block {ordinal}",
            "keywords": f"ORD_MST ord mst order master block{ordinal} it's O'Brien\ttab\\slash",
            "embedding": None if ordinal % 2 else rng.standard_normal(EMBEDDING_DIMENSIONS).astype(np.float32).tolist(),
            "fast_embedding": rng.standard_normal(EMBEDDING_DIMENSIONS).astype(np.float32).tolist()
            if ordinal % 2
            else None,
        }
        for ordinal in range(5)
    ]
    insert_chunks(session, rows[:3])
    insert_chunks(session, rows[3:])  # a second batch in the same transaction
    stored = session.execute(
        select(SearchChunk.ordinal, SearchChunk.text, SearchChunk.embedding, SearchChunk.fast_embedding)
        .where(SearchChunk.table_id == table.id)
        .order_by(SearchChunk.ordinal)
    ).all()
    assert [r.ordinal for r in stored] == [0, 1, 2, 3, 4]
    for row, given in zip(stored, rows, strict=True):
        assert row.text == given["text"]
        for column, key in ((row.embedding, "embedding"), (row.fast_embedding, "fast_embedding")):
            if given[key] is None:
                assert column is None
            else:
                assert np.array_equal(np.asarray(column, dtype=np.float32), np.asarray(given[key], dtype=np.float32))
    for given in rows:
        matches = session.scalar(
            text(
                "SELECT tsv = to_tsvector('simple', :keywords) FROM search_chunks "
                "WHERE table_id = :table AND ordinal = :ordinal"
            ),
            {"keywords": given["keywords"], "table": table.id, "ordinal": given["ordinal"]},
        )
        assert matches is True
    assert session.scalar(text("SELECT count(*) FROM new_search_chunks")) == 0
