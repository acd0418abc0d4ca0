"""A table search's rankings after its first, read in one statement: the tables by words for each text searched by
words alone, the tables already found ordered by the meaning of each phrase, the notes that match the question and
the values it names. One round trip where these were four.

Each ranking is the statement its own reader used to send (`search_queries.keyword_statement`,
`search_queries.note_statement`, `search_values.value_statement`, `search_queries.fast_statement` for chunks not yet
refined, and the exact scan of the found tables' chunks below), one branch of a UNION ALL whose rows say which
ranking and which text they belong to. A branch keeps its own ORDER BY and LIMIT; the rows are put back in each
ranking's order here. Scores travel as text, so each comes back
exactly as its own statement gave it, whatever the type of the branch (`real` for PostgreSQL's ranks, `float8` for
distances and BM25).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sqlalchemy import ARRAY, Float, Integer, Text, bindparam, cast, func, literal, null, select, union, union_all
from sqlalchemy.orm import Session

from core.access.users import UserRef
from core.store.models import Note, SearchChunk
from core.store.repositories.bm25 import multi_ranked_statement, plain_words, union_query
from core.store.repositories.search_queries import (
    Hit,
    NoteHit,
    chunk_vectors,
    fast_statement,
    keyword_statement,
    note_statement,
)
from core.store.repositories.search_rows import written_count
from core.store.repositories.search_values import ValueHit, value_statement

_KEYWORD, _AMONG, _NOTE, _VALUE, _FAST = "k", "m", "n", "v", "f"


@dataclass(frozen=True)
class NoteQuery:
    """The notes that match a question: by words (`query`, a to_tsquery expression, or None) or by meaning."""

    query: str | None
    vector: list[float]
    viewer: UserRef | None
    limit: int
    min_similarity: float


@dataclass(frozen=True)
class RankingQuery:
    """What one statement reads for a search over `source_ids`.

    `word_queries`: to_tsquery expressions, each ranked by words over the visible tables (BM25 with `bm25`, else
    `ts_rank_cd`), `limit` tables each. `among_vectors`: vectors each ordering, by their nearest chunk, the tables
    of `among_tables` and those the word queries find (in the multilingual space with `multilingual`). `notes` and
    `values` (a to_tsquery expression and how many values) are read when given. `fast`, a question's vector in the
    fast space and the sources to search, ranks those sources' chunks still waiting for their vector
    (`search.refinement`)."""

    source_ids: Sequence[int]
    limit: int
    bm25: bool = False
    word_queries: Sequence[str] = ()
    among_vectors: Sequence[list[float]] = ()
    among_tables: Sequence[int] = ()
    multilingual: bool = False
    notes: NoteQuery | None = None
    values: tuple[str, int] | None = None
    fast: tuple[list[float], Sequence[int]] | None = None


@dataclass
class RankingRows:
    """Each ranking best first: per word query, per vector, the note hits (word matches first), the value hits,
    the unrefined chunks' tables in the fast space."""

    keyword: list[list[Hit]] = field(default_factory=list)
    among: list[list[Hit]] = field(default_factory=list)
    notes: list[NoteHit] = field(default_factory=list)
    values: list[ValueHit] = field(default_factory=list)
    fast: list[Hit] = field(default_factory=list)


def _row(
    kind: str,
    part: Any,
    table_id: Any,
    score: Any,
    source_id: Any,
    key: Any,
    first: Any,
    second: Any,
    third: Any = None,
) -> Any:
    """One branch's columns in the shape every branch shares (`first`, `second`, `third`: a branch's own texts)."""
    return (
        literal(kind).label("kind"),
        cast(part, Integer).label("part"),
        cast(table_id, Integer).label("table_id"),
        cast(score, Text).label("score"),
        cast(source_id, Integer).label("source_id"),
        cast(key, Integer).label("key"),
        cast(first, Text).label("first"),
        cast(second, Text).label("second"),
        cast(null() if third is None else third, Text).label("third"),
    )


@dataclass(frozen=True)
class _Shape:
    """What decides a ranking statement's text; its values are bind parameters (`_values`). A process builds each
    shape once (`_statement`): a search pays neither for building nor for compiling it, and the driver sends one
    text per shape, which PostgreSQL prepares after a few runs."""

    words: int
    among: int
    limit: int
    bm25: bool
    multilingual: bool
    notes: tuple[bool, bool, int] | None  # (by words too, for a viewer, how many)
    values: int | None  # how many
    fast: bool


def _shape(query: RankingQuery) -> _Shape:
    searched = bool(query.source_ids)
    among = len(query.among_vectors) if query.among_tables or (query.word_queries and searched) else 0
    n = query.notes
    return _Shape(
        len(query.word_queries) if searched else 0,
        among,
        query.limit,
        query.bm25,
        query.multilingual,
        (bool(n.query), n.viewer is not None, n.limit) if n is not None and searched else None,
        query.values[1] if query.values is not None and searched else None,
        query.fast is not None and bool(query.fast[1]),
    )


def _values(query: RankingQuery, shape: _Shape) -> dict[str, Any]:
    """The bind parameters of `_statement(shape)` for `query`."""
    found: dict[str, Any] = {"sources": list(query.source_ids)}
    if shape.words > 1 and shape.bm25:
        queries = list(query.word_queries[: shape.words])
        union = union_query(queries)
        found |= {"multi_query": union, "multi_plain": plain_words(union)}
        found["multi_plains"] = [plain_words(q) for q in queries]
    else:
        for index, text in enumerate(query.word_queries[: shape.words]):
            found[f"query_{index}"] = text
            found[f"plain_{index}"] = plain_words(text)
    found |= {f"among_{index}": vector for index, vector in enumerate(query.among_vectors[: shape.among])}
    found["among_tables"] = list(query.among_tables)
    if shape.notes is not None and query.notes is not None:
        n = query.notes
        platform, user_id = n.viewer if n.viewer is not None else (None, None)
        found |= {
            "note_query": n.query,
            "note_vector": n.vector,
            "note_platform": platform,
            "note_user": user_id,
            "note_similarity": n.min_similarity,
        }
    if shape.values is not None and query.values is not None:
        found["value_query"] = query.values[0]
    if shape.fast and query.fast is not None:
        found |= {"fast_vector": query.fast[0], "fast_sources": list(query.fast[1])}
    return found


def _ints(name: str) -> Any:
    return bindparam(name, type_=ARRAY(Integer))


@lru_cache(maxsize=512)
def _statement(shape: _Shape) -> Any:
    sources, limit = _ints("sources"), written_count("limit", shape.limit)
    branches = []
    found_by_words = None
    if shape.words > 1 and shape.bm25:
        found_by_words = multi_ranked_statement(sources, limit).cte("found_by_words")
    elif shape.words:
        words = [
            select(literal(index).label("part"), ranked.c.table_id, ranked.c.rank)
            for index in range(shape.words)
            for ranked in [
                keyword_statement(bindparam(f"query_{index}", type_=Text), sources, limit, shape.bm25).subquery()
            ]
        ]
        found_by_words = (words[0] if len(words) == 1 else union_all(*words)).cte("found_by_words")
    if found_by_words is not None:
        branches.append(
            select(
                *_row(
                    _KEYWORD,
                    found_by_words.c.part,
                    found_by_words.c.table_id,
                    found_by_words.c.rank,
                    0,
                    0,
                    null(),
                    null(),
                )
            )
        )
    if shape.among:
        given = select(func.unnest(_ints("among_tables")).label("table_id"))
        tables = given if found_by_words is None else union(given, select(found_by_words.c.table_id))
        among = tables.cte("among_tables")
        column = chunk_vectors(shape.multilingual)
        # each chunk of those tables read once, with its distance to every vector: narrow rows to group per vector
        distances = (
            select(
                SearchChunk.table_id,
                SearchChunk.source_id,
                *(
                    (column.cosine_distance(bindparam(f"among_{index}", type_=column.type)) + literal(0.0)).label(
                        f"distance_{index}"
                    )
                    for index in range(shape.among)
                ),
            )
            .where(SearchChunk.table_id.in_(select(among.c.table_id)))
            .where(column.is_not(None))
            .cte("among_distances")
        )
        for index in range(shape.among):
            distance = func.min(distances.c[f"distance_{index}"])
            branches.append(
                select(
                    *_row(_AMONG, index, distances.c.table_id, distance, distances.c.source_id, 0, null(), null())
                ).group_by(distances.c.table_id, distances.c.source_id)
            )
    if shape.notes is not None:
        by_words, for_viewer, how_many = shape.notes
        notes = note_statement(
            bindparam("note_query", type_=Text) if by_words else None,
            bindparam("note_vector", type_=Note.embedding.type),
            sources,
            (bindparam("note_platform", type_=Text), bindparam("note_user", type_=Text)) if for_viewer else None,
            written_count("note_limit", how_many),
            bindparam("note_similarity", type_=Float),
        ).subquery()
        branches.append(
            select(*_row(_NOTE, notes.c.part, notes.c.table_id, notes.c.score, 0, notes.c.id, notes.c.text, null()))
        )
    if shape.values is not None:
        how_many = written_count("value_limit", shape.values)
        values = value_statement(bindparam("value_query", type_=Text), sources, how_many).subquery()
        branches.append(
            select(
                *_row(
                    _VALUE,
                    0,
                    values.c.table_id,
                    values.c.rank,
                    values.c.source_id,
                    values.c.id,
                    values.c.column_name,
                    values.c.value,
                    values.c.meaning,
                )
            )
        )
    if shape.fast:
        vector = bindparam("fast_vector", type_=SearchChunk.fast_embedding.type)
        fast = fast_statement(vector, _ints("fast_sources"), limit).subquery()
        branches.append(select(*_row(_FAST, 0, fast.c.table_id, fast.c.distance, fast.c.source_id, 0, null(), null())))
    if not branches:
        return None
    return branches[0] if len(branches) == 1 else union_all(*branches)


def rankings(session: Session, query: RankingQuery) -> RankingRows:
    """The rankings `query` asks for, in one statement (none when it asks for nothing)."""
    found = RankingRows([[] for _ in query.word_queries], [[] for _ in query.among_vectors], [], [])
    shape = _shape(query)
    statement = _statement(shape)
    if statement is None:
        return found
    notes: list[tuple[int, float, NoteHit]] = []
    values: list[tuple[float, int, ValueHit]] = []
    rows = session.execute(statement, _values(query, shape)).all()
    for kind, part, table_id, score, source_id, key, first, second, third in rows:
        value = float(score)
        if kind == _KEYWORD:
            found.keyword[part].append(Hit(table_id, value))
        elif kind == _AMONG:
            found.among[part].append(Hit(table_id, 1.0 - value, source_id))
        elif kind == _FAST:
            found.fast.append(Hit(table_id, 1.0 - value, source_id))
        elif kind == _NOTE:
            notes.append((part, value, NoteHit(key, table_id, value, first)))
        else:
            values.append((value, key, ValueHit(source_id, table_id, first, second, value, third)))
    # UNION ALL keeps each branch's rows but not their order across branches: each ranking is put back in order.
    for hits in (*found.keyword, *found.among, found.fast):
        hits.sort(key=lambda h: (-h.score, h.table_id))
    notes.sort(key=lambda n: (n[0], -n[1]))  # stable: equal scores keep the order their statement gave them
    found.notes = [n[2] for n in notes]
    values.sort(key=lambda v: (-v[0], v[1]))
    found.values = [v[2] for v in values]
    return found
