"""The queries behind table search: nearest chunks, full-text hits, note hits, and what candidates show."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ARRAY, Integer, Text, any_, func, literal, literal_column, or_, select, text, union_all
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session, defer
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql.elements import ColumnElement

from core.access.users import UserRef
from core.store.models import CommonWord, Note, NoteTable, SearchChunk, Source, SourceTable, TableColumn
from core.store.repositories import bm25 as bm25_ranking

#: At or below this many chunks in the searched databases, the nearest chunks are found by an exact scan (complete,
#: and with vectors stored in the row about 1 ms per 1,000 chunks on a 2-core machine); above it, by the HNSW index.
EXACT_SCAN_MAX_CHUNKS = 20_000
#: Chunks the HNSW index returns when every chunk may match; a search over a share of the chunks (some databases,
#: or a user who may see only some) asks for proportionally more, so about as many of them survive the filter.
HNSW_EF_SEARCH = 100
#: pgvector's own limit on hnsw.ef_search (an HNSW scan returns at most ef_search chunks before versions 0.8).
HNSW_EF_SEARCH_MAX = 1000
_EF_SET = "tablescout.ef_search"  # session.info key: the hnsw.ef_search this transaction has set
_STATS = "tablescout.search_stats"  # session.info key: this transaction's chunk counts and common words


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


@dataclass(frozen=True)
class SearchStats:
    """What choosing a search plan needs, read in one statement: chunks per source and the common words."""

    chunks: dict[int, int]
    common_words: frozenset[str]

    def searched(self, source_ids: Sequence[int]) -> int:
        return sum(self.chunks.get(s, 0) for s in source_ids)

    @property
    def total(self) -> int:
        return sum(self.chunks.values())


def _ids(source_ids: Sequence[int]) -> ColumnElement[Any]:
    """`= ANY(array)`: one statement text (and so one prepared statement) whatever the number of ids."""
    return any_(literal(list(source_ids), ARRAY(Integer)))


def search_stats(session: Session) -> SearchStats:
    """Chunk counts and common words, read once per transaction (indexing in the same transaction forgets them)."""
    cached = session.info.get(_STATS)
    if isinstance(cached, SearchStats):
        return cached
    counts = select(func.coalesce(func.jsonb_object_agg(Source.id, Source.chunk_count), literal_column("'{}'::jsonb")))
    words = select(func.coalesce(func.array_agg(CommonWord.word), literal([], ARRAY(Text))))
    row = session.execute(select(counts.scalar_subquery(), words.scalar_subquery())).one()
    stats = SearchStats({int(k): int(v) for k, v in row[0].items()}, frozenset(row[1]))
    session.info[_STATS] = stats
    return stats


def forget_search_stats(session: Session) -> None:
    session.info.pop(_STATS, None)


def chunk_count(session: Session, source_ids: Sequence[int]) -> int:
    """Indexed chunks of the sources, as counted when they were last indexed."""
    return search_stats(session).searched(source_ids)


def common_words(session: Session) -> set[str]:
    return set(search_stats(session).common_words)


def ef_search_for(total: int, searched: int) -> int:
    """How many chunks to ask the HNSW index for when `searched` of `total` chunks may match."""
    if searched <= 0 or total <= 0:
        return HNSW_EF_SEARCH
    wanted = HNSW_EF_SEARCH * total / searched
    return int(min(HNSW_EF_SEARCH_MAX, max(HNSW_EF_SEARCH, round(wanted))))


def _set_ef_search(session: Session, value: int) -> None:
    if session.info.get(_EF_SET) != value:
        session.execute(text(f"SET LOCAL hnsw.ef_search = {int(value)}"))
        session.info[_EF_SET] = value


def _visible_table_ids(source_ids: Sequence[int]) -> Any:
    """The visible tables of the sources (answered by the partial index ix_source_tables_visible alone)."""
    return select(SourceTable.id).where(SourceTable.source_id == _ids(source_ids), SourceTable.visible)


def _chunk_vectors(multilingual: bool) -> Any:
    """The chunks' vector column of a space: MiniLM's, or the multilingual one (search.multilingual)."""
    return SearchChunk.ml_embedding if multilingual else SearchChunk.embedding


def has_multilingual(session: Session, source_ids: Sequence[int]) -> bool:
    """Do any of the sources' chunks have a multilingual vector yet?"""
    found = session.execute(
        select(SearchChunk.id)
        .where(SearchChunk.source_id == _ids(source_ids), SearchChunk.ml_embedding.is_not(None))
        .limit(1)
    ).first()
    return found is not None


def _exact_semantic(vector: list[float], source_ids: Sequence[int], limit: int, multilingual: bool = False) -> Any:
    # `+ 0` keeps the planner off the HNSW index: for a small filtered set the exact scan is complete. The distances
    # are computed below an OFFSET 0 fence, so grouping sorts (table, distance) pairs and not the vectors themselves
    # (which at a few thousand chunks spilled the sort to disk and doubled the scan's time).
    distances = (
        select(
            SearchChunk.table_id.label("table_id"),
            SearchChunk.source_id.label("source_id"),
            (_chunk_vectors(multilingual).cosine_distance(vector) + literal(0.0)).label("distance"),
        )
        .where(
            SearchChunk.source_id == _ids(source_ids),
            SearchChunk.table_id.in_(_visible_table_ids(source_ids)),
            _chunk_vectors(multilingual).is_not(None),
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


def _indexed_semantic(vector: list[float], source_ids: Sequence[int], limit: int, fetch: int) -> Any:
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
        .where(SourceTable.source_id == _ids(source_ids), SourceTable.visible)
        .group_by(nearest.c.table_id, SourceTable.source_id)
        .order_by(closest, nearest.c.table_id)
        .limit(limit)
    )


def _semantic_statement(
    session: Session, vector: list[float], source_ids: Sequence[int], limit: int, multilingual: bool = False
) -> Any:
    """The plan for the size: an exact scan over few chunks, else the HNSW index asked for enough chunks that
    about as many of the searched databases' chunks survive the filter as if every chunk could match. The
    multilingual vectors have no index: always an exact scan."""
    if multilingual:
        return _exact_semantic(vector, source_ids, limit, multilingual=True)
    stats = search_stats(session)
    searched = stats.searched(source_ids)
    if searched <= EXACT_SCAN_MAX_CHUNKS:
        return _exact_semantic(vector, source_ids, limit)
    fetch = ef_search_for(stats.total, searched)
    _set_ef_search(session, fetch)
    return _indexed_semantic(vector, source_ids, limit, fetch)


def semantic_hits(
    session: Session, vector: list[float], source_ids: Sequence[int], limit: int, multilingual: bool = False
) -> list[Hit]:
    """Tables by their nearest chunk (cosine), best first: `limit` tables, however many chunks each has."""
    if not source_ids:
        return []
    stmt = _semantic_statement(session, vector, source_ids, limit, multilingual)
    return [Hit(t, 1.0 - float(d), s) for t, d, s in session.execute(stmt).all()]


def semantic_among(
    session: Session, vectors: Sequence[list[float]], table_ids: Sequence[int], multilingual: bool = False
) -> list[list[Hit]]:
    """For each vector, the given tables by their nearest chunk, best first: an exact scan over those tables'
    chunks only (read by the table_id index), one statement for all the vectors."""
    if not vectors or not table_ids:
        return [[] for _ in vectors]
    parts = []
    column = _chunk_vectors(multilingual)
    for index, vector in enumerate(vectors):
        distance = column.cosine_distance(vector) + literal(0.0)
        parts.append(
            select(literal(index).label("part"), SearchChunk.table_id, func.min(distance), SearchChunk.source_id)
            .where(SearchChunk.table_id == any_(literal(list(table_ids), ARRAY(Integer))))
            .where(column.is_not(None))
            .group_by(SearchChunk.table_id, SearchChunk.source_id)
        )
    found: list[list[Hit]] = [[] for _ in vectors]
    for part, table_id, value, source_id in session.execute(union_all(*parts)).all():
        found[int(part)].append(Hit(table_id, 1.0 - float(value), source_id))
    for hits in found:
        hits.sort(key=lambda h: (-h.score, h.table_id))
    return found


def _keyword_statement(query: str, source_ids: Sequence[int], limit: int, bm25: bool = False) -> Any:
    """(table_id, rank) best first: each table's best chunk by BM25 (`core.store.repositories.bm25`) or by
    `ts_rank_cd`."""
    if bm25:
        ranked = bm25_ranking.ranked_statement(query, source_ids, limit).subquery()
        return select(ranked.c.table_id, ranked.c.score.label("rank"))
    tsquery = func.to_tsquery("simple", query)
    rank = func.ts_rank_cd(SearchChunk.tsv, tsquery, 1)
    best = func.max(rank)
    return (
        select(SearchChunk.table_id, best.label("rank"))
        .where(
            SearchChunk.source_id == _ids(source_ids),
            SearchChunk.table_id.in_(_visible_table_ids(source_ids)),
            SearchChunk.tsv.op("@@")(tsquery),
        )
        .group_by(SearchChunk.table_id)
        .order_by(best.desc(), SearchChunk.table_id)
        .limit(limit)
    )


def keyword_hits(session: Session, query: str, source_ids: Sequence[int], limit: int, bm25: bool = False) -> list[Hit]:
    """Tables by their best chunk's full-text rank for any query word (`query` is a to_tsquery expression): BM25
    with `bm25`, else `ts_rank_cd`."""
    return keyword_hits_of(session, [query], source_ids, limit, bm25)[0]


def keyword_hits_of(
    session: Session, queries: Sequence[str], source_ids: Sequence[int], limit: int, bm25: bool = False
) -> list[list[Hit]]:
    """`keyword_hits` of each query (to_tsquery expressions), in one statement."""
    if not queries or not source_ids:
        return [[] for _ in queries]
    parts = []
    for index, query in enumerate(queries):
        keyword = _keyword_statement(query, source_ids, limit, bm25).subquery()
        parts.append(select(literal(index).label("part"), keyword.c.table_id, keyword.c.rank))
    stmt = parts[0] if len(parts) == 1 else union_all(*parts)
    found: list[list[Hit]] = [[] for _ in queries]
    for part, table_id, rank in session.execute(stmt).all():
        found[int(part)].append(Hit(table_id, float(rank)))
    for hits in found:  # UNION ALL keeps each part's rows but not their order across parts
        hits.sort(key=lambda h: (-h.score, h.table_id))
    return found


def hybrid_hits(
    session: Session,
    vector: list[float] | None,
    query: str | None,
    source_ids: Sequence[int],
    limit: int,
    bm25: bool = False,
    multilingual: bool = False,
) -> tuple[list[Hit], list[Hit]]:
    """`semantic_hits` and `keyword_hits` of one text in one statement (one round trip instead of two); a ranking
    whose input is None is not computed and comes back empty."""
    if not source_ids or (vector is None and not query):
        return [], []
    parts = []
    if vector is not None:
        semantic = _semantic_statement(session, vector, source_ids, limit, multilingual).subquery()
        parts.append(select(literal("s").label("kind"), semantic.c.table_id, semantic.c.distance, semantic.c.source_id))
    if query:
        keyword = _keyword_statement(query, source_ids, limit, bm25).subquery()
        parts.append(select(literal("k").label("kind"), keyword.c.table_id, keyword.c.rank, literal(0)))
    stmt = parts[0] if len(parts) == 1 else union_all(*parts)
    semantic_found: list[Hit] = []
    keyword_found: list[Hit] = []
    for kind, table_id, value, source_id in session.execute(stmt).all():
        if kind == "s":
            semantic_found.append(Hit(table_id, 1.0 - float(value), source_id))
        else:
            keyword_found.append(Hit(table_id, float(value)))
    # UNION ALL keeps each part's rows but not their order across parts; restore best first.
    semantic_found.sort(key=lambda h: (-h.score, h.table_id))
    keyword_found.sort(key=lambda h: (-h.score, h.table_id))
    return semantic_found, keyword_found


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
    viewer: UserRef | None,
    limit: int,
    min_similarity: float,
) -> list[NoteHit]:
    """Notes that match the question by words or by meaning, with the tables they are attached to: the word
    matches first (scored 1 + rank), then the meaning matches, each best first; one statement."""
    if not source_ids:
        return []
    platform, user_id = viewer if viewer else (None, None)
    base = (
        select(Note.id, NoteTable.table_id, Note.text)
        .join(NoteTable, NoteTable.note_id == Note.id)
        .join(SourceTable, SourceTable.id == NoteTable.table_id)
        .where(SourceTable.source_id == _ids(source_ids), SourceTable.visible, Note.deleted_at.is_(None))
        .where(_visible_notes(platform, user_id))
    )
    parts = []
    if query:
        tsquery = func.to_tsquery("simple", query)
        rank = 1.0 + func.ts_rank_cd(Note.tsv, tsquery, 1)
        words = base.add_columns(rank.label("score"), literal(0).label("part")).where(Note.tsv.op("@@")(tsquery))
        parts.append(words.order_by(rank.desc()).limit(limit).subquery())
    similarity = 1 - Note.embedding.cosine_distance(vector)
    meaning = base.add_columns(similarity.label("score"), literal(1).label("part")).where(
        Note.embedding.is_not(None), similarity >= min_similarity
    )
    parts.append(meaning.order_by(similarity.desc()).limit(limit).subquery())
    stmt = union_all(*(select(p.c.id, p.c.table_id, p.c.text, p.c.score, p.c.part) for p in parts))
    rows = list(session.execute(stmt).all())
    rows.sort(key=lambda r: (r.part, -float(r.score)))
    return [NoteHit(n, t, float(score), body) for n, t, body, score, _ in rows]


def sources(session: Session) -> list[Source]:
    return list(session.scalars(select(Source).order_by(Source.name)))


def tables(session: Session, table_ids: Sequence[int], *, with_cards: bool = True) -> dict[int, SourceTable]:
    """The tables by id. `with_cards=False` leaves each card unread until `load_cards` (or, one statement per
    table, until it is first used): a search ranks a few hundred tables and shows a few, and reading every card
    is most of a search's store time at 10,000 tables."""
    if not table_ids:
        return {}
    stmt = select(SourceTable).where(SourceTable.id.in_(table_ids))
    if not with_cards:
        stmt = stmt.options(defer(SourceTable.card))
    return {t.id: t for t in session.scalars(stmt)}


def column_names(session: Session, table_ids: Sequence[int]) -> dict[int, frozenset[str]]:
    """Each table's column names in lower case, in one statement."""
    if not table_ids:
        return {}
    names = func.array_agg(func.lower(TableColumn.name))
    stmt = (
        select(TableColumn.table_id, names)
        .where(TableColumn.table_id == any_(literal(list(table_ids), ARRAY(Integer))))
        .group_by(TableColumn.table_id)
    )
    return {int(table_id): frozenset(found) for table_id, found in session.execute(stmt).all()}


def load_cards(session: Session, rows: Mapping[int, SourceTable], table_ids: Sequence[int]) -> None:
    """Read the cards of `table_ids` (rows from `tables(..., with_cards=False)`) in one statement."""
    wanted = [t for t in dict.fromkeys(table_ids) if t in rows and "card" in sa_inspect(rows[t]).unloaded]
    if not wanted:
        return
    for table_id, card in session.execute(select(SourceTable.id, SourceTable.card).where(SourceTable.id.in_(wanted))):
        set_committed_value(rows[table_id], "card", card)


def notes_for(
    session: Session, table_ids: Sequence[int], viewer: UserRef | None, per_table: int
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
