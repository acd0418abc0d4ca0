"""Search chunks and embeddings: what the index holds per table, note and source."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, text, update
from sqlalchemy.orm import Session

from core.store.models import CommonWord, Note, SearchChunk, Source, SourceTable
from core.store.repositories.search_stats import forget_search_stats
from core.store.vectors import vector_text


def indexable_tables(session: Session, source_id: int) -> list[tuple[int, dict[str, Any]]]:
    stmt = select(SourceTable.id, SourceTable.card).where(
        SourceTable.source_id == source_id, SourceTable.visible, SourceTable.card.is_not(None)
    )
    return [(table_id, card) for table_id, card in session.execute(stmt).all()]


def existing_chunks(session: Session, table_ids: Sequence[int]) -> dict[tuple[int, str, int], tuple[int, str]]:
    """(table id, kind, ordinal) → (chunk id, text)."""
    if not table_ids:
        return {}
    stmt = select(SearchChunk.id, SearchChunk.table_id, SearchChunk.kind, SearchChunk.ordinal, SearchChunk.text).where(
        SearchChunk.table_id.in_(table_ids)
    )
    return {(t, k, o): (i, text) for i, t, k, o, text in session.execute(stmt).all()}


def upsert_chunk(
    session: Session,
    existing_id: int | None,
    source_id: int,
    table_id: int,
    kind: str,
    ordinal: int,
    text: str,
    keywords: str,
    embedding: list[float] | None,
    fast_embedding: list[float] | None = None,
) -> None:
    """A chunk with its vector, or with only the fast encoder's (`embedding` None: refinement makes it)."""
    tsv = func.to_tsvector("simple", keywords)
    if existing_id is None:
        chunk = SearchChunk(table_id=table_id, source_id=source_id, kind=kind, ordinal=ordinal, text=text, tsv=tsv)
        chunk.embedding = embedding
        chunk.fast_embedding = fast_embedding
        session.add(chunk)
    else:
        session.execute(
            update(SearchChunk)
            .where(SearchChunk.id == existing_id)
            .values(
                text=text,
                embedding=embedding,
                fast_embedding=fast_embedding,
                ml_embedding=None,
                tsv=tsv,
                source_id=source_id,
            )
        )  # the multilingual vector of the old text is made again (search.multilingual)


def unrefined_chunks(session: Session, source_id: int, after: int, limit: int) -> list[tuple[int, str]]:
    """(chunk id, text) of the source's chunks without their vector (`embedding` NULL), by id from `after` on; read
    from the partial index ix_search_chunks_unrefined."""
    stmt = (
        select(SearchChunk.id, SearchChunk.text)
        .where(SearchChunk.source_id == source_id, SearchChunk.embedding.is_(None), SearchChunk.id > after)
        .order_by(SearchChunk.id)
        .limit(limit)
    )
    return [(chunk_id, chunk_text) for chunk_id, chunk_text in session.execute(stmt).all()]


def set_refined(session: Session, vectors: Sequence[tuple[int, Any]]) -> int:
    """Write chunks' vectors, (chunk id, vector) pairs, and clear their fast vectors, in one UPDATE; a chunk that
    has its vector already is left alone. How many were written."""
    if not vectors:
        return 0
    stmt = text(
        "UPDATE search_chunks AS c SET embedding = CAST(v.vector AS vector), fast_embedding = NULL "
        "FROM unnest(CAST(:ids AS integer[]), CAST(:vectors AS text[])) AS v(id, vector) "
        "WHERE c.id = v.id AND c.embedding IS NULL"
    )
    ids = [chunk_id for chunk_id, _ in vectors]
    texts = [vector_text(vector) for _, vector in vectors]
    return int(session.execute(stmt, {"ids": ids, "vectors": texts}).rowcount or 0)  # type: ignore[attr-defined]


def unrefined_count(session: Session, source_id: int) -> int:
    """How many of the source's chunks are without their vector."""
    stmt = select(func.count()).where(SearchChunk.source_id == source_id, SearchChunk.embedding.is_(None))
    return int(session.scalar(stmt) or 0)


def has_unrefined(session: Session, source_id: int) -> bool:
    """Has the source chunks without their vector?"""
    stmt = select(SearchChunk.id).where(SearchChunk.source_id == source_id, SearchChunk.embedding.is_(None))
    return session.execute(stmt.limit(1)).first() is not None


def chunks_without_ml(session: Session, source_id: int, after: int, limit: int) -> list[tuple[int, str]]:
    """(chunk id, text) of the source's chunks without a multilingual vector, by id from `after` on."""
    stmt = (
        select(SearchChunk.id, SearchChunk.text)
        .where(SearchChunk.source_id == source_id, SearchChunk.ml_embedding.is_(None), SearchChunk.id > after)
        .order_by(SearchChunk.id)
        .limit(limit)
    )
    return [(chunk_id, chunk_text) for chunk_id, chunk_text in session.execute(stmt).all()]


def set_ml_embeddings(session: Session, vectors: Sequence[tuple[int, list[float]]]) -> None:
    """Write multilingual vectors: (chunk id, vector) pairs, in one executemany UPDATE."""
    if vectors:
        stmt = (
            update(SearchChunk).where(SearchChunk.id == bindparam("chunk_id")).values(ml_embedding=bindparam("vector"))
        )
        session.connection().execute(stmt, [{"chunk_id": i, "vector": v} for i, v in vectors])


def delete_chunks(session: Session, chunk_ids: Sequence[int]) -> None:
    if chunk_ids:
        session.execute(delete(SearchChunk).where(SearchChunk.id.in_(chunk_ids)))


def delete_chunks_of_invisible(session: Session, source_id: int) -> int:
    hidden = select(SourceTable.id).where(SourceTable.source_id == source_id, SourceTable.visible.is_(False))
    result = session.execute(delete(SearchChunk).where(SearchChunk.table_id.in_(hidden)).returning(SearchChunk.id))
    return len(result.all())


def set_summary_embedding(session: Session, source_id: int, embedding: list[float] | None) -> None:
    session.execute(update(Source).where(Source.id == source_id).values(summary_embedding=embedding))


def set_note_index(session: Session, note_id: int, keywords: str, embedding: list[float]) -> None:
    session.execute(
        update(Note).where(Note.id == note_id).values(tsv=func.to_tsvector("simple", keywords), embedding=embedding)
    )


def set_chunk_count(session: Session, source_id: int) -> int:
    """Count the source's chunks of visible tables and their words (BM25's corpus statistics); the count."""
    count, words = session.execute(
        select(func.count(), func.coalesce(func.sum(func.length(SearchChunk.tsv)), 0))
        .select_from(SearchChunk)
        .join(SourceTable, SourceTable.id == SearchChunk.table_id)
        .where(SourceTable.source_id == source_id, SourceTable.visible)
    ).one()
    session.execute(
        update(Source).where(Source.id == source_id).values(chunk_count=int(count or 0), chunk_words=int(words or 0))
    )
    forget_search_stats(session)
    return int(count or 0)


#: Above this many chunks the words' document counts come from a random sample of about this many chunks: the
#: count of every chunk's words is the slowest step of indexing a large catalog (it ran after each database, over
#: all of them), and a share of 5% is estimated from 30,000 chunks within a few tenths of a percent.
COMMON_WORD_SAMPLE = 30_000


def refresh_common_words(session: Session, share: float, min_chunks: int) -> int:
    """Record the words found in more than `share` of all chunks, once the index holds `min_chunks` or more."""
    session.execute(delete(CommonWord))
    forget_search_stats(session)
    total = int(session.scalar(select(func.count()).select_from(SearchChunk)) or 0)
    if total < min_chunks:
        return 0
    if total <= COMMON_WORD_SAMPLE:
        stats = text("SELECT word, ndoc FROM ts_stat('SELECT tsv FROM search_chunks') WHERE ndoc > :threshold")
        rows = session.execute(stats, {"threshold": int(total * share)}).all()
        found = [(str(w), int(n)) for w, n in rows]
    else:
        percent = 100.0 * COMMON_WORD_SAMPLE / total
        sample = f"SELECT tsv FROM search_chunks TABLESAMPLE BERNOULLI ({percent:.6f}) REPEATABLE (17)"
        sampled = session.execute(
            text(f"SELECT count(*) FROM ({sample}) s"),
        ).scalar_one()
        stats = text("SELECT word, ndoc FROM ts_stat(:sample) WHERE ndoc > :threshold")
        rows = session.execute(stats, {"sample": sample, "threshold": int(int(sampled) * share)}).all()
        scale = total / max(int(sampled), 1)
        found = [(str(w), round(int(n) * scale)) for w, n in rows]
    if found:
        session.execute(insert(CommonWord), [{"word": w, "documents": n} for w, n in found])
    return len(found)
