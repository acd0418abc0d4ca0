"""What choosing a table search's plan reads: each source's chunk count and the common words, once per transaction,
and the HNSW index's `ef_search` for a search over a share of the chunks.

`search_context` reads them with the registered sources and whether any approved example exists, in one statement
and once per transaction: what a search reads before its rankings costs one round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ARRAY, Text, exists, func, literal, literal_column, select, text
from sqlalchemy.orm import Session

from core.store.models import CommonWord, SearchChunk, Source, VerifiedExample

#: Chunks the HNSW index returns when every chunk may match; a search over a share of the chunks (some databases,
#: or a user who may see only some) asks for proportionally more, so about as many of them survive the filter.
HNSW_EF_SEARCH = 100
#: pgvector's own limit on hnsw.ef_search (an HNSW scan returns at most ef_search chunks before versions 0.8).
HNSW_EF_SEARCH_MAX = 1000
_EF_SET = "tablescout.ef_search"  # session.info key: the hnsw.ef_search this transaction has set
_STATS = "tablescout.search_stats"  # session.info key: this transaction's chunk counts and common words
_CONTEXT = "tablescout.search_context"  # session.info key: this transaction's `SearchContext`


@dataclass(frozen=True)
class SearchStats:
    """What choosing a search plan needs, read in one statement: chunks per source and the common words."""

    chunks: dict[int, int]
    common_words: frozenset[str]

    def searched(self, source_ids: Sequence[int]) -> int:
        """The chunks of the given sources (0 for a source without any)."""
        return sum(self.chunks.get(s, 0) for s in source_ids)

    @property
    def total(self) -> int:
        """The chunks of every source."""
        return sum(self.chunks.values())


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


@dataclass(frozen=True)
class SearchContext:
    """What a search reads before its rankings: every registered source (by name), the statistics, whether any
    approved example exists (when none does, no search looks for one) and the sources with chunks still waiting for
    their vector (search.refinement; searched in the fast space too)."""

    sources: tuple[Source, ...]
    stats: SearchStats
    any_approved_example: bool
    unrefined: frozenset[int] = frozenset()


def search_context(session: Session) -> SearchContext:
    """The sources, statistics, approved-example flag and unrefined sources in one statement, read once per
    transaction (indexing in the same transaction forgets them). Whether a source has unrefined chunks is one probe
    of the partial index ix_search_chunks_unrefined, empty once every chunk is refined."""
    cached = session.info.get(_CONTEXT)
    if isinstance(cached, SearchContext):
        return cached
    words = select(func.coalesce(func.array_agg(CommonWord.word), literal([], ARRAY(Text)))).scalar_subquery()
    approved = exists().where(VerifiedExample.status == "approved")
    unrefined = exists().where(SearchChunk.source_id == Source.id, SearchChunk.embedding.is_(None))
    rows = session.execute(select(Source, words, approved, unrefined).order_by(Source.name)).all()
    if not rows:  # no source: nothing to search, and the statistics are read on their own if asked for
        return SearchContext((), search_stats(session), False)
    found = tuple(row[0] for row in rows)
    stats = SearchStats({s.id: int(s.chunk_count) for s in found}, frozenset(rows[0][1]))
    session.info[_STATS] = stats
    context = SearchContext(found, stats, bool(rows[0][2]), frozenset(row[0].id for row in rows if row[3]))
    session.info[_CONTEXT] = context
    return context


def forget_search_stats(session: Session) -> None:
    """Drop this transaction's statistics and search context, so the next search reads them again (after
    indexing)."""
    session.info.pop(_STATS, None)
    session.info.pop(_CONTEXT, None)


def chunk_count(session: Session, source_ids: Sequence[int]) -> int:
    """Indexed chunks of the sources, as counted when they were last indexed."""
    return search_stats(session).searched(source_ids)


def common_words(session: Session) -> set[str]:
    """The words too common to search by (as counted when the sources were last indexed)."""
    return set(search_stats(session).common_words)


def ef_search_for(total: int, searched: int) -> int:
    """How many chunks to ask the HNSW index for when `searched` of `total` chunks may match."""
    if searched <= 0 or total <= 0:
        return HNSW_EF_SEARCH
    wanted = HNSW_EF_SEARCH * total / searched
    return int(min(HNSW_EF_SEARCH_MAX, max(HNSW_EF_SEARCH, round(wanted))))


def set_ef_search(session: Session, value: int) -> None:
    """Set hnsw.ef_search for the rest of the transaction, unless it is set to `value` already."""
    if session.info.get(_EF_SET) != value:
        session.execute(text(f"SET LOCAL hnsw.ef_search = {int(value)}"))
        session.info[_EF_SET] = value
