"""The per-text rankings of a table search: for the question, each extra term and each phrase of the question, the
tables by meaning and by words, read in as few statements as the texts allow, and each phrase's own rankings for
coverage (`search.coverage`). The search's note and value hits come in the same statement as the rankings by words
and the phrases' rankings by meaning (`search_batch.rankings`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy.orm import Session

from core.store.repositories import search_queries as queries
from core.store.repositories.search_batch import NoteQuery, RankingQuery, RankingRows, rankings
from search.coverage import PartRanking
from search.fusion import best_first
from search.masked_hits import MaskedHits
from search.query_text import tsquery

#: How many tables each ranking reads (and the note and first meaning rankings of `search.service`).
RETRIEVE = 60


def text_rankings(
    session: Session,
    texts: Sequence[str],
    weights: Sequence[float],
    source_ids: list[int],
    signals: frozenset[str],
    vectors: np.ndarray,
    first_hits: list[queries.Hit] | None,
    common: set[str],
    masked: MaskedHits,
    phrases_from: int,
    bm25: bool,
    multilingual: bool = False,
    notes: NoteQuery | None = None,
    values: tuple[str, int] | None = None,
    fast: tuple[list[float], list[int]] | None = None,
) -> tuple[list[tuple[list[int], float]], dict[int, set[str]], list[PartRanking], RankingRows]:
    """Per-table rankings by meaning and by words for the question, each extra term and each phrase of the
    question, weighted by `weights`; hits on tables with columns masked for the reader are scored on what the
    reader sees (`search.masked_hits`). Texts from `phrases_from` on are the question's phrases: searched by words
    over the whole index, by meaning only among the tables the other rankings found (a phrase's meaning orders
    what the question found; searching the whole index for it costs a vector search each). Also each phrase's own
    rankings, for coverage (`search.coverage`). `vectors` are of the multilingual space when `multilingual`.
    `first_hits`, when given, are the question's meaning hits already read. `notes` and `values` ask for the
    search's note and value hits, and `fast` (the question's fast vector, the sources) for the tables of chunks not
    yet refined in the fast space, all read with the rankings. Returns (weighted rankings, the signals that found each
    table, each phrase's rankings, the note and value hits)."""
    semantic_found, keyword_found, others = _hits(
        session,
        texts,
        source_ids,
        signals,
        vectors,
        first_hits,
        common,
        phrases_from,
        bm25,
        multilingual,
        notes,
        values,
        fast,
    )
    rankings: list[tuple[list[int], float]] = []
    own: dict[int, tuple[list[int], list[int]]] = {}
    matched: dict[int, set[str]] = {}
    for index, weight in enumerate(weights):
        by_meaning: list[int] = []
        by_words: list[int] = []
        if "semantic" in signals:
            hits = masked.semantic(semantic_found[index], vectors[index])
            by_meaning = best_first((h.table_id, h.score) for h in hits)
            rankings.append((by_meaning, weight))
            for table_id in by_meaning[:RETRIEVE]:
                matched.setdefault(table_id, set()).add("semantic")
        if index in keyword_found:
            query, keyword = keyword_found[index]
            words_hits = masked.keyword(keyword, query, bm25)
            by_words = best_first((h.table_id, h.score) for h in words_hits)
            rankings.append((by_words, weight))
            for table_id in by_words:
                matched.setdefault(table_id, set()).add("keyword")
        own[index] = (by_meaning, by_words)
    parts = [PartRanking(texts[i], *own[i]) for i in range(phrases_from, len(texts))]
    return rankings, matched, parts, others


def _hits(
    session: Session,
    texts: Sequence[str],
    source_ids: list[int],
    signals: frozenset[str],
    vectors: np.ndarray,
    first_hits: list[queries.Hit] | None,
    common: set[str],
    phrases_from: int,
    bm25: bool,
    multilingual: bool,
    notes: NoteQuery | None,
    values: tuple[str, int] | None,
    fast: tuple[list[float], list[int]] | None,
) -> tuple[dict[int, list[queries.Hit]], dict[int, tuple[str, list[queries.Hit]]], RankingRows]:
    """The store's hits for each text, before masks: (text index → meaning hits, text index → (its to_tsquery
    expression, word hits), the note and value hits). A text with no query words has no entry in the second."""
    keyword_found: dict[int, tuple[str, list[queries.Hit]]] = {}
    semantic_found: dict[int, list[queries.Hit]] = {}
    words_only: dict[int, str] = {}  # texts searched by words alone: all in one statement below
    for index, text in enumerate(texts):
        reuse = index == 0 and first_hits is not None
        whole = "semantic" in signals and index < phrases_from and not reuse
        query = tsquery(text, common, fallback=index == 0) if "keyword" in signals else None
        semantic_found[index] = first_hits if reuse and first_hits is not None else []
        if not whole:
            if query:
                words_only[index] = query
            continue
        # both rankings of one text in one statement (the question's meaning ranking was read already)
        semantic, keyword = queries.hybrid_hits(
            session, vectors[index].tolist(), query, source_ids, RETRIEVE, bm25, multilingual
        )
        semantic_found[index] = semantic
        if query:
            keyword_found[index] = (query, keyword)
    among: list[list[float]] = []
    known: set[int] = set()
    if "semantic" in signals and len(texts) > phrases_from:
        # The phrases order the tables every other ranking found: those found so far, and those the texts
        # searched by words find in the same statement.
        among = [v.tolist() for v in vectors[phrases_from:]]
        known = {h.table_id for hits in semantic_found.values() for h in hits}
        known |= {h.table_id for _, hits in keyword_found.values() for h in hits}
    found = rankings(
        session,
        RankingQuery(
            source_ids,
            RETRIEVE,
            bm25,
            list(words_only.values()),
            among,
            sorted(known),
            multilingual,
            notes,
            values,
            fast,
        ),
    )
    for (index, query), keyword in zip(words_only.items(), found.keyword, strict=True):
        keyword_found[index] = (query, keyword)
    for offset, hits in enumerate(found.among):
        semantic_found[phrases_from + offset] = hits[:RETRIEVE]
    return semantic_found, keyword_found, found
