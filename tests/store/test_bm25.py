"""BM25 over search chunks, computed in the store: the scores Okapi's formula gives, per searched database, each
table scored as its best chunk."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import func
from sqlalchemy.orm import Session

from core.store.models import SearchChunk, Source, SourceTable
from core.store.repositories import bm25, search_index
from search.query_text import tsquery
from tests.store.batch_support import keyword_hits_of

# Head chunk texts of two databases (one invisible table in the first). "order" is everywhere in the first
# database, "ledger" once; the second database is all about ledgers.
FIRST = {
    "ORDERS": "order order order date customer amount",
    "ORDER_LINES": "order line product quantity order",
    "ORDER_HIST": "order history order status changed",
    "GENERAL_LEDGER": "ledger account amount",
    "CUSTOMERS": "customer name city order",
    "HIDDEN": "ledger ledger ledger secret",
}
SECOND = {f"LEDGER_{i}": f"ledger entry {i} account" for i in range(6)}


@pytest.fixture
def bm25_catalog(session: Session) -> dict[str, Any]:
    ids: dict[str, int] = {}
    sources = []
    for name, tables in (("b1", FIRST), ("b2", SECOND)):
        source = Source(name=name, engine="sqlite", url_ref="sqlite://")
        session.add(source)
        session.flush()
        sources.append(source.id)
        for table, words in tables.items():
            row = SourceTable(source_id=source.id, name=table, visible=table != "HIDDEN")
            session.add(row)
            session.flush()
            ids[table] = row.id
            for kind, ordinal, text in chunk_texts(words):
                session.add(
                    SearchChunk(
                        table_id=row.id,
                        source_id=source.id,
                        kind=kind,
                        ordinal=ordinal,
                        text=text,
                        tsv=func.to_tsvector("simple", text),
                    )
                )
    session.flush()
    for source_id in sources:
        search_index.set_chunk_count(session, source_id)
    return {"ids": ids, "sources": sources}


def chunk_texts(words: str) -> list[tuple[str, int, str]]:
    """A head chunk, and a columns chunk that repeats its words among others."""
    return [("head", 0, words), ("columns", 0, f"{words} {words} extra column words here")]


def words_query(text: str) -> str:
    query = tsquery(text)
    assert query is not None
    return query


def okapi(tables: dict[str, str], question: list[str]) -> dict[str, float]:
    """BM25 computed here: every chunk a document, length in distinct words, a table's score its best chunk's."""
    chunks = [(name, Counter(text.split())) for name, words in tables.items() for _, _, text in chunk_texts(words)]
    n = len(chunks)
    avgdl = sum(len(bag) for _, bag in chunks) / n
    scores: dict[str, float] = {}
    for name, bag in chunks:
        score = 0.0
        for word in question:
            if word not in bag:
                continue
            df = sum(1 for _, other in chunks if word in other)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = bag[word]
            score += idf * tf * (bm25.K1 + 1) / (tf + bm25.K1 * (1 - bm25.B + bm25.B * len(bag) / avgdl))
        if score:
            scores[name] = max(score, scores.get(name, 0.0))
    return scores


def test_scores_are_okapi_bm25_over_the_chunks_of_the_searched_database(
    session: Session, bm25_catalog: dict[str, Any]
) -> None:
    first = bm25_catalog["sources"][0]
    query = words_query("ledger of every order")
    hits = keyword_hits_of(session, [query], [first], 10, bm25=True)[0]
    # the invisible table (gone from its source) is no document: not returned, not in the statistics
    expected = okapi({k: v for k, v in FIRST.items() if k != "HIDDEN"}, ["ledger", "order"])
    names = {v: k for k, v in bm25_catalog["ids"].items()}
    assert {names[h.table_id]: pytest.approx(h.score, rel=1e-6) for h in hits} == expected
    assert names[hits[0].table_id] == "GENERAL_LEDGER"  # the rare word beats the repeated common one


def test_a_word_common_in_the_searched_database_weighs_little_there(
    session: Session, bm25_catalog: dict[str, Any]
) -> None:
    first, second = bm25_catalog["sources"]
    query = words_query("ledger account")
    alone = {h.table_id: h.score for h in keyword_hits_of(session, [query], [first], 10, bm25=True)[0]}
    pooled = {h.table_id: h.score for h in keyword_hits_of(session, [query], [first, second], 10, bm25=True)[0]}
    ledger = bm25_catalog["ids"]["GENERAL_LEDGER"]
    assert pooled[ledger] < alone[ledger]  # among the second database's ledgers the word says less
    assert len(pooled) == 7


def test_a_readers_own_chunk_text_scores_as_the_stored_one_would(
    session: Session, bm25_catalog: dict[str, Any]
) -> None:
    first = bm25_catalog["sources"][0]
    query = words_query("customer amount")
    stored = {h.table_id: h.score for h in keyword_hits_of(session, [query], [first], 10, bm25=True)[0]}
    orders = [text for _, _, text in chunk_texts(FIRST["ORDERS"])]
    given = bm25.given_scores(session, [*orders, "nothing to find here", "customer name city"], query, [first])
    best = max(s for s in given[:2] if s is not None)
    assert best == pytest.approx(stored[bm25_catalog["ids"]["ORDERS"]], rel=1e-9)
    assert given[2] is None
    other = given[3]
    assert other is not None
    assert 0 < other < best


def test_several_queries_come_back_in_one_statement_each_as_ranked_alone(
    session: Session, bm25_catalog: dict[str, Any]
) -> None:
    first, second = bm25_catalog["sources"]
    texts = [tsquery(t) for t in ("ledger", "order status", "customer city")]
    assert all(texts)
    found = keyword_hits_of(session, [t for t in texts if t], [first, second], 10, bm25=True)
    for query, hits in zip(texts, found, strict=True):
        assert query is not None
        assert hits == keyword_hits_of(session, [query], [first, second], 10, bm25=True)[0]
    assert found[1][0].table_id == bm25_catalog["ids"]["ORDER_HIST"]


def test_queries_sharing_words_are_each_scored_as_okapi_bm25(session: Session, bm25_catalog: dict[str, Any]) -> None:
    # a question and its phrases, ranked in one pass over the chunks: each text keeps its own scores
    first = bm25_catalog["sources"][0]
    texts = {
        "ledger of every order": ["ledger", "order"],
        "order": ["order"],
        "customer amount": ["customer", "amount"],
    }
    found = keyword_hits_of(session, [words_query(t) for t in texts], [first], 10, bm25=True)
    names = {v: k for k, v in bm25_catalog["ids"].items()}
    visible = {k: v for k, v in FIRST.items() if k != "HIDDEN"}
    for words, hits in zip(texts.values(), found, strict=True):
        assert {names[h.table_id]: pytest.approx(h.score, rel=1e-9) for h in hits} == okapi(visible, words)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert [len(hits) for hits in keyword_hits_of(session, [words_query(t) for t in texts], [first], 2, True)] == [
        2
    ] * 3
