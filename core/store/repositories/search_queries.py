"""The queries behind table search's rankings: nearest chunks, full-text hits, both at once, note hits, and the
full-text rank of texts built for one reader.

Choosing a search's plan (chunk counts, common words, ef_search) is `search_stats`'s; the rows a search reads besides
its rankings (sources, tables, cards, notes) are `search_rows`'s. The names of theirs that the search code and the
tests reach as `search_queries.<name>` are re-exported below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import ARRAY, Integer, bindparam, func, literal, select, text, union_all
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter

from core.access.users import UserRef
from core.store.models import Note, NoteTable, SearchChunk, SourceTable
from core.store.repositories import bm25 as bm25_ranking
from core.store.repositories.search_rows import Ids, any_id, visible_notes, written_count
from core.store.repositories.search_rows import load_cards as load_cards
from core.store.repositories.search_rows import notes_for as notes_for
from core.store.repositories.search_rows import sources as sources
from core.store.repositories.search_rows import tables as tables
from core.store.repositories.search_stats import HNSW_EF_SEARCH as HNSW_EF_SEARCH
from core.store.repositories.search_stats import HNSW_EF_SEARCH_MAX as HNSW_EF_SEARCH_MAX
from core.store.repositories.search_stats import chunk_count as chunk_count
from core.store.repositories.search_stats import common_words as common_words
from core.store.repositories.search_stats import ef_search_for as ef_search_for
from core.store.repositories.search_stats import search_stats as search_stats
from core.store.repositories.search_stats import set_ef_search

#: At or below this many chunks in the searched databases, the nearest chunks are found by an exact scan (complete,
#: and with vectors stored in the row about 1 ms per 1,000 chunks on a 2-core machine); above it, by the HNSW index.
EXACT_SCAN_MAX_CHUNKS = 20_000


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


def _visible_table_ids(source_ids: Ids) -> Any:
    """The visible tables of the sources (answered by the partial index ix_source_tables_visible alone)."""
    return select(SourceTable.id).where(SourceTable.source_id == any_id(source_ids), SourceTable.visible)


def chunk_vectors(multilingual: bool) -> Any:
    """The chunks' vector column of a space: MiniLM's, or the multilingual one (search.multilingual)."""
    return SearchChunk.ml_embedding if multilingual else SearchChunk.embedding


def has_multilingual(session: Session, source_ids: Sequence[int]) -> bool:
    """Do any of the sources' chunks have a multilingual vector yet?"""
    found = session.execute(
        select(SearchChunk.id)
        .where(SearchChunk.source_id == any_id(source_ids), SearchChunk.ml_embedding.is_not(None))
        .limit(1)
    ).first()
    return found is not None


def fast_statement(vector: Any, source_ids: Ids, limit: Any) -> Any:
    """(table_id, distance, source_id) best first: the tables by their nearest chunk in the fast space, among the
    chunks still waiting for their vector (search.refinement), by an exact scan (`search_batch.rankings` reads it
    with a search's other rankings)."""
    return _exact_scan(SearchChunk.fast_embedding, vector, source_ids, limit, SearchChunk.embedding.is_(None))


def _exact_scan(column: Any, vector: Any, source_ids: Ids, limit: Any, *where: Any) -> Any:
    # `+ 0` keeps the planner off the HNSW index: for a small filtered set the exact scan is complete. The distances
    # are computed below an OFFSET 0 fence, so grouping sorts (table, distance) pairs and not the vectors themselves
    # (which at a few thousand chunks spilled the sort to disk and doubled the scan's time).
    distances = (
        select(
            SearchChunk.table_id.label("table_id"),
            SearchChunk.source_id.label("source_id"),
            (column.cosine_distance(vector) + literal(0.0)).label("distance"),
        )
        .where(
            SearchChunk.source_id == any_id(source_ids),
            SearchChunk.table_id.in_(_visible_table_ids(source_ids)),
            column.is_not(None),
            *where,
        )
        .offset(0)
        .subquery()
    )
    best = func.min(distances.c.distance)
    return (
        select(distances.c.table_id, best.label("distance"), distances.c.source_id)
        .group_by(distances.c.table_id, distances.c.source_id)
        .order_by(best, distances.c.table_id)
        .limit(limit)
    )


def _indexed_semantic(vector: Any, source_ids: Ids, limit: Any, fetch: Any) -> Any:
    # The index answers "nearest N chunks" only when the ordering is the whole query; the source and visibility
    # filters apply to that over-fetched set afterwards.
    distance = SearchChunk.embedding.cosine_distance(vector)
    nearest = (
        select(SearchChunk.table_id.label("table_id"), distance.label("distance"))
        .order_by(distance)
        .limit(fetch)
        .subquery()
    )
    closest = func.min(nearest.c.distance)
    return (
        select(nearest.c.table_id, closest.label("distance"), SourceTable.source_id)
        .join(SourceTable, SourceTable.id == nearest.c.table_id)
        .where(SourceTable.source_id == any_id(source_ids), SourceTable.visible)
        .group_by(nearest.c.table_id, SourceTable.source_id)
        .order_by(closest, nearest.c.table_id)
        .limit(limit)
    )


@lru_cache(maxsize=256)
def _semantic_shape(multilingual: bool, limit: int, fetch: int | None) -> Any:
    """The nearest-chunk statement of a plan, built once per process; its vector and sources are bind parameters
    (`vector`, `sources`), so a search neither builds nor compiles it, and PostgreSQL prepares it after a few runs.
    `fetch`: the chunks asked of the HNSW index; None for an exact scan."""
    column = chunk_vectors(multilingual)
    vector, sources = bindparam("vector", type_=column.type), bindparam("sources", type_=ARRAY(Integer))
    if fetch is None:
        return _exact_scan(column, vector, sources, written_count("limit", limit))
    return _indexed_semantic(vector, sources, written_count("limit", limit), written_count("fetch", fetch))


def _fetch(session: Session, source_ids: Sequence[int], multilingual: bool) -> int | None:
    """The plan for the size: None for an exact scan over few chunks, else how many chunks to ask the HNSW index
    for (set as the transaction's ef_search): enough that about as many of the searched databases' chunks survive
    the filter as if every chunk could match. The multilingual vectors have no index: always an exact scan."""
    if multilingual:
        return None
    stats = search_stats(session)
    searched = stats.searched(source_ids)
    if searched <= EXACT_SCAN_MAX_CHUNKS:
        return None
    fetch = ef_search_for(stats.total, searched)
    set_ef_search(session, fetch)
    return fetch


def _semantic_statement(session: Session, source_ids: Sequence[int], limit: int, multilingual: bool = False) -> Any:
    """The nearest-chunk statement of the plan for the size (`_fetch`), run with `{"vector": …, "sources": …}`."""
    return _semantic_shape(multilingual, limit, _fetch(session, source_ids, multilingual))


def semantic_hits(
    session: Session, vector: list[float], source_ids: Sequence[int], limit: int, multilingual: bool = False
) -> list[Hit]:
    """Tables by their nearest chunk (cosine), best first: `limit` tables, however many chunks each has."""
    if not source_ids:
        return []
    stmt = _semantic_statement(session, source_ids, limit, multilingual)
    rows = session.execute(stmt, {"vector": vector, "sources": list(source_ids)}).all()
    return [Hit(t, 1.0 - float(d), s) for t, d, s in rows]


def keyword_statement(query: Any, source_ids: Ids, limit: Any, bm25: bool = False) -> Any:
    """(table_id, rank) best first: each table's best chunk by BM25 (`core.store.repositories.bm25`) or by
    `ts_rank_cd`. `query` is a to_tsquery expression, or the bind parameter of one (then `source_ids` and `limit`
    are parameters too, and BM25 reads its words from the parameter of the same name with `plain_` for `query_`)."""
    if bm25:
        ranked = bm25_ranking.ranked_statement(query, source_ids, limit).subquery()
        return select(ranked.c.table_id, ranked.c.score.label("rank"))
    tsquery = func.to_tsquery("simple", query)
    rank = func.ts_rank_cd(SearchChunk.tsv, tsquery, 1)
    best = func.max(rank)
    return (
        select(SearchChunk.table_id, best.label("rank"))
        .where(
            SearchChunk.source_id == any_id(source_ids),
            SearchChunk.table_id.in_(_visible_table_ids(source_ids)),
            SearchChunk.tsv.op("@@")(tsquery),
        )
        .group_by(SearchChunk.table_id)
        .order_by(best.desc(), SearchChunk.table_id)
        .limit(limit)
    )


def hybrid_hits(
    session: Session,
    vector: list[float] | None,
    query: str | None,
    source_ids: Sequence[int],
    limit: int,
    bm25: bool = False,
    multilingual: bool = False,
) -> tuple[list[Hit], list[Hit]]:
    """`semantic_hits` and `keyword_hits_of` of one text in one statement (one round trip instead of two); a ranking
    whose input is None is not computed and comes back empty."""
    if not source_ids or (vector is None and not query):
        return [], []
    parts = []
    if vector is not None:  # the nearest-chunk statement of `semantic_hits`, its vector and sources as parameters
        semantic = _semantic_statement(session, source_ids, limit, multilingual).subquery()
        parts.append(select(literal("s").label("kind"), semantic.c.table_id, semantic.c.distance, semantic.c.source_id))
    if query:
        keyword = keyword_statement(query, source_ids, limit, bm25).subquery()
        parts.append(select(literal("k").label("kind"), keyword.c.table_id, keyword.c.rank, literal(0)))
    stmt = parts[0] if len(parts) == 1 else union_all(*parts)
    semantic_found: list[Hit] = []
    keyword_found: list[Hit] = []
    semantic_values = {"vector": vector, "sources": list(source_ids)} if vector is not None else {}
    for kind, table_id, value, source_id in session.execute(stmt, semantic_values).all():
        if kind == "s":
            semantic_found.append(Hit(table_id, 1.0 - float(value), source_id))
        else:
            keyword_found.append(Hit(table_id, float(value)))
    # UNION ALL keeps each part's rows but not their order across parts; restore best first.
    semantic_found.sort(key=lambda h: (-h.score, h.table_id))
    keyword_found.sort(key=lambda h: (-h.score, h.table_id))
    return semantic_found, keyword_found


def note_statement(
    query: Any,
    vector: Any,
    source_ids: Ids,
    viewer: UserRef | tuple[Any, Any] | None,
    limit: Any,
    min_similarity: Any,
) -> Any:
    """(id, table_id, text, score, part) of the notes that match the question by words (part 0, scored 1 + rank)
    or by meaning (part 1), with the tables they are attached to, each part best first
    (`search_batch.rankings` reads it with a search's other rankings)."""
    platform, user_id = viewer if viewer else (None, None)
    base = (
        select(Note.id, NoteTable.table_id, Note.text)
        .join(NoteTable, NoteTable.note_id == Note.id)
        .join(SourceTable, SourceTable.id == NoteTable.table_id)
        .where(SourceTable.source_id == any_id(source_ids), SourceTable.visible, Note.deleted_at.is_(None))
        .where(visible_notes(platform, user_id))
    )
    parts = []
    if isinstance(query, BindParameter) or query:
        tsquery = func.to_tsquery("simple", query)
        rank = 1.0 + func.ts_rank_cd(Note.tsv, tsquery, 1)
        words = base.add_columns(rank.label("score"), literal(0).label("part")).where(Note.tsv.op("@@")(tsquery))
        parts.append(words.order_by(rank.desc()).limit(limit).subquery())
    similarity = 1 - Note.embedding.cosine_distance(vector)
    meaning = base.add_columns(similarity.label("score"), literal(1).label("part")).where(
        Note.embedding.is_not(None), similarity >= min_similarity
    )
    parts.append(meaning.order_by(similarity.desc()).limit(limit).subquery())
    return union_all(*(select(p.c.id, p.c.table_id, p.c.text, p.c.score, p.c.part) for p in parts))


def text_ranks(session: Session, keywords: Sequence[str], query: str) -> list[float | None]:
    """The full-text rank of `query` (a to_tsquery expression) against each of `keywords` as a chunk would be
    indexed (None where it does not match): for chunk texts built for one reader rather than stored. One
    statement for all of them."""
    if not keywords:
        return []
    stmt = text(
        "SELECT CASE WHEN to_tsvector('simple', k.words) @@ q.query "
        "THEN ts_rank_cd(to_tsvector('simple', k.words), q.query, 1) END "
        "FROM unnest(CAST(:keywords AS text[])) WITH ORDINALITY AS k(words, position), "
        "to_tsquery('simple', :query) AS q(query) ORDER BY k.position"
    )
    values = session.scalars(stmt, {"keywords": list(keywords), "query": query}).all()
    return [float(v) if v is not None else None for v in values]
