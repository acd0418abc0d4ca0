"""The queries behind table search: nearest chunks, full-text hits, note hits, and what candidates show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import case, func, literal, or_, select, text
from sqlalchemy.orm import Session

from core.store.models import CommonWord, Note, NoteTable, SearchChunk, Source, SourceTable

EXACT_SCAN_MAX_CHUNKS = 20_000
HNSW_EF_SEARCH = 100


@dataclass(frozen=True)
class Hit:
    table_id: int
    score: float
    source_id: int = 0


@dataclass(frozen=True)
class NoteHit:
    note_id: int
    table_id: int
    score: float
    text: str


def chunk_count(session: Session, source_ids: Sequence[int]) -> int:
    """Indexed chunks of the sources, as counted when they were last indexed."""
    return int(session.scalar(select(func.sum(Source.chunk_count)).where(Source.id.in_(source_ids))) or 0)


def common_words(session: Session) -> set[str]:
    return set(session.scalars(select(CommonWord.word)))


def semantic_hits(session: Session, vector: list[float], source_ids: Sequence[int], limit: int) -> list[Hit]:
    """Tables by their nearest chunk (cosine), best first: `limit` tables, however many chunks each has.

    An exact scan for small sets, the HNSW index (over-fetching chunks) for large ones."""
    if chunk_count(session, source_ids) <= EXACT_SCAN_MAX_CHUNKS:
        distance = SearchChunk.embedding.cosine_distance(vector)
        # `+ 0` keeps the planner off the HNSW index: for a small filtered set the exact scan is complete.
        best = func.min(distance + literal(0.0))
        stmt = (
            select(SearchChunk.table_id, best, SearchChunk.source_id)
            .join(SourceTable, SourceTable.id == SearchChunk.table_id)
            .where(SearchChunk.source_id.in_(source_ids), SourceTable.visible, SearchChunk.embedding.is_not(None))
            .group_by(SearchChunk.table_id, SearchChunk.source_id)
            .order_by(best, SearchChunk.table_id)
            .limit(limit)
        )
        return [Hit(t, 1.0 - float(d), s) for t, d, s in session.execute(stmt).all()]
    # The index answers "nearest N chunks" only when the ordering is the whole query; the source and visibility
    # filters apply to that over-fetched set afterwards.
    session.execute(text(f"SET LOCAL hnsw.ef_search = {HNSW_EF_SEARCH}"))
    distance = SearchChunk.embedding.cosine_distance(vector)
    nearest = (
        select(SearchChunk.table_id.label("table_id"), distance.label("distance"))
        .order_by(distance)
        .limit(HNSW_EF_SEARCH)
        .subquery()
    )
    closest = func.min(nearest.c.distance)
    stmt = (
        select(nearest.c.table_id, closest, SourceTable.source_id)
        .join(SourceTable, SourceTable.id == nearest.c.table_id)
        .where(SourceTable.source_id.in_(source_ids), SourceTable.visible)
        .group_by(nearest.c.table_id, SourceTable.source_id)
        .order_by(closest, nearest.c.table_id)
        .limit(limit)
    )
    return [Hit(t, 1.0 - float(d), s) for t, d, s in session.execute(stmt).all()]


def keyword_hits(session: Session, query: str, source_ids: Sequence[int], limit: int) -> list[Hit]:
    """Tables by their best full-text chunk rank for any query word (`query` is a to_tsquery expression)."""
    tsquery = func.to_tsquery("simple", query)
    rank = func.ts_rank_cd(SearchChunk.tsv, tsquery, 1)
    best = func.max(rank)
    stmt = (
        select(SearchChunk.table_id, best)
        .join(SourceTable, SourceTable.id == SearchChunk.table_id)
        .where(SearchChunk.source_id.in_(source_ids), SourceTable.visible, SearchChunk.tsv.op("@@")(tsquery))
        .group_by(SearchChunk.table_id)
        .order_by(best.desc(), SearchChunk.table_id)
        .limit(limit)
    )
    return [Hit(t, float(r)) for t, r in session.execute(stmt).all()]


def _visible_notes(platform: str | None, user_id: str | None) -> Any:
    shared = Note.private.is_(False)
    if platform is None:
        return shared
    return or_(shared, (Note.author_platform == platform) & (Note.author_id == user_id))


def note_hits(
    session: Session,
    query: str | None,
    vector: list[float],
    source_ids: Sequence[int],
    viewer: tuple[str, str] | None,
    limit: int,
    min_similarity: float,
) -> list[NoteHit]:
    """Notes that match the question by words or by meaning, with the tables they are attached to."""
    platform, user_id = viewer if viewer else (None, None)
    base = (
        select(Note.id, NoteTable.table_id, Note.text)
        .join(NoteTable, NoteTable.note_id == Note.id)
        .join(SourceTable, SourceTable.id == NoteTable.table_id)
        .where(SourceTable.source_id.in_(source_ids), SourceTable.visible, Note.deleted_at.is_(None))
        .where(_visible_notes(platform, user_id))
    )
    hits: list[NoteHit] = []
    if query:
        tsquery = func.to_tsquery("simple", query)
        rank = func.ts_rank_cd(Note.tsv, tsquery, 1)
        stmt = base.add_columns(rank).where(Note.tsv.op("@@")(tsquery)).order_by(rank.desc()).limit(limit)
        hits += [NoteHit(n, t, 1.0 + float(r), body) for n, t, body, r in session.execute(stmt).all()]
    similarity = 1 - Note.embedding.cosine_distance(vector)
    stmt = (
        base.add_columns(similarity)
        .where(Note.embedding.is_not(None), similarity >= min_similarity)
        .order_by(similarity.desc())
        .limit(limit)
    )
    hits += [NoteHit(n, t, float(s), body) for n, t, body, s in session.execute(stmt).all()]
    return hits


def sources(session: Session) -> list[Source]:
    return list(session.scalars(select(Source).order_by(Source.name)))


def tables(session: Session, table_ids: Sequence[int]) -> dict[int, SourceTable]:
    if not table_ids:
        return {}
    return {t.id: t for t in session.scalars(select(SourceTable).where(SourceTable.id.in_(table_ids)))}


def notes_for(
    session: Session, table_ids: Sequence[int], viewer: tuple[str, str] | None, per_table: int
) -> dict[int, list[Note]]:
    """Up to `per_table` notes a viewer may read per table, newest first."""
    if not table_ids:
        return {}
    platform, user_id = viewer if viewer else (None, None)
    stmt = (
        select(NoteTable.table_id, Note)
        .join(Note, Note.id == NoteTable.note_id)
        .where(NoteTable.table_id.in_(table_ids), Note.deleted_at.is_(None), _visible_notes(platform, user_id))
        .order_by(Note.created_at.desc(), Note.id.desc())
    )
    found: dict[int, list[Note]] = {}
    for table_id, note in session.execute(stmt).all():
        bucket = found.setdefault(table_id, [])
        if len(bucket) < per_table:
            bucket.append(note)
    return found


def live_tables_of(session: Session, copy_ids: Sequence[int]) -> dict[int, int]:
    """copy table id → its live table id, for visible live tables."""
    if not copy_ids:
        return {}
    stmt = select(SourceTable.id, SourceTable.copy_of_id).where(
        SourceTable.id.in_(copy_ids), SourceTable.copy_of_id.is_not(None)
    )
    return {c: int(live) for c, live in session.execute(stmt).all() if live is not None}


def text_ranks(session: Session, keywords: Sequence[str], query: str) -> list[float | None]:
    """The full-text rank of `query` (a to_tsquery expression) against each of `keywords` as a chunk would be
    indexed (None where it does not match): for chunk texts built for one reader rather than stored."""
    if not keywords:
        return []
    tsquery = func.to_tsquery("simple", query)
    ranks = []
    for words in keywords:
        tsv = func.to_tsvector("simple", words)
        stmt = select(case((tsv.op("@@")(tsquery), func.ts_rank_cd(tsv, tsquery, 1)), else_=None))
        value = session.scalar(stmt)
        ranks.append(float(value) if value is not None else None)
    return ranks
