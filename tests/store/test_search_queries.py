"""The search store queries: plans per size, one statement where there were several, the same answers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sqlalchemy import func, text
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session

from core.store.models import (
    EMBEDDING_DIMENSIONS,
    Note,
    NoteTable,
    SearchChunk,
    Source,
    SourceTable,
    TableColumn,
    VerifiedExample,
)
from core.store.repositories import search_batch, search_index, search_rows, search_stats, search_values
from core.store.repositories import search_queries as queries
from core.store.repositories.search_batch import NoteQuery, RankingQuery
from tests.store.batch_support import keyword_hits_of, note_hits, semantic_among, statements

WORDS = ("order", "customer", "invoice", "payment", "shipment", "stock", "employee", "ledger")


def _unit(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(EMBEDDING_DIMENSIONS)
    return [float(x) for x in v / np.linalg.norm(v)]


@pytest.fixture
def catalog(session: Session) -> dict[str, Any]:
    """Two sources of 12 tables, two or three chunks each, random vectors; one table of the first is invisible."""
    rng = np.random.default_rng(7)
    vectors: dict[int, list[list[float]]] = {}
    sources = []
    for s in range(2):
        source = Source(name=f"q{s}", engine="sqlite", url_ref="sqlite://")
        session.add(source)
        session.flush()
        sources.append(source.id)
        for t in range(12):
            row = SourceTable(source_id=source.id, name=f"T{s}_{t}", visible=not (s == 0 and t == 3))
            session.add(row)
            session.flush()
            for ordinal in range(2 + t % 2):
                vector = _unit(rng)
                words = f"{WORDS[t % len(WORDS)]} {WORDS[(t + ordinal) % len(WORDS)]} t{s}x{t}"
                chunk = SearchChunk(
                    table_id=row.id,
                    source_id=source.id,
                    kind="head" if ordinal == 0 else "columns",
                    ordinal=ordinal,
                    text=words,
                    tsv=func.to_tsvector("simple", words),
                )
                chunk.embedding = vector
                session.add(chunk)
                vectors.setdefault(row.id, []).append(vector)
    session.flush()
    for source_id in sources:
        search_index.set_chunk_count(session, source_id)
    invisible = {t.id for t in session.query(SourceTable).filter(SourceTable.visible.is_(False))}
    owner = {t.id: t.source_id for t in session.query(SourceTable).filter(SourceTable.source_id.in_(sources))}
    return {"sources": sources, "vectors": vectors, "invisible": invisible, "owner": owner, "rng": rng}


def brute_force(catalog: dict[str, Any], query: list[float], source_ids: list[int]) -> list[tuple[int, float]]:
    """Visible tables of the sources by their nearest chunk, computed here."""
    q = np.asarray(query)
    best = []
    for table_id, chunks in catalog["vectors"].items():
        if catalog["owner"][table_id] in source_ids and table_id not in catalog["invisible"]:
            best.append((table_id, max(float(np.asarray(c) @ q) for c in chunks)))
    return sorted(best, key=lambda p: (-p[1], p[0]))


def test_the_exact_scan_ranks_visible_tables_of_the_searched_sources(session: Session, catalog: dict[str, Any]) -> None:
    query = _unit(catalog["rng"])
    first = catalog["sources"][0]
    hits = queries.semantic_hits(session, query, [first], 5)
    expected = brute_force(catalog, query, [first])[:5]
    assert [h.table_id for h in hits] == [t for t, _ in expected]
    assert [round(h.score, 4) for h in hits] == [round(s, 4) for _, s in expected]
    assert {h.source_id for h in hits} == {first}
    everything = queries.semantic_hits(session, query, catalog["sources"], 100)
    assert catalog["invisible"].isdisjoint(h.table_id for h in everything)
    assert len(everything) == 23  # 24 tables, one invisible


def test_above_the_exact_scan_size_the_index_is_asked_for_more_chunks_the_fewer_may_match(
    session: Session, catalog: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queries, "EXACT_SCAN_MAX_CHUNKS", 0)
    query = _unit(catalog["rng"])
    first, second = catalog["sources"]
    stats = queries.search_stats(session)
    hits = queries.semantic_hits(session, query, [first], 5)
    assert session.scalar(text("SHOW hnsw.ef_search")) == str(
        queries.ef_search_for(stats.total, stats.searched([first]))
    )
    # 50 chunks: the graph search finds the true nearest tables, and only the searched source's visible ones.
    assert [h.table_id for h in hits] == [t for t, _ in brute_force(catalog, query, [first])[:5]]
    both = queries.semantic_hits(session, query, [first, second], 5)
    assert session.scalar(text("SHOW hnsw.ef_search")) == str(queries.HNSW_EF_SEARCH)
    assert [h.table_id for h in both] == [t for t, _ in brute_force(catalog, query, [first, second])[:5]]


def test_ef_search_grows_with_the_share_left_out_up_to_pgvectors_limit() -> None:
    assert queries.ef_search_for(1000, 1000) == queries.HNSW_EF_SEARCH
    assert queries.ef_search_for(1000, 250) == 4 * queries.HNSW_EF_SEARCH
    assert queries.ef_search_for(350_000, 3_500) == queries.HNSW_EF_SEARCH_MAX
    assert queries.ef_search_for(0, 0) == queries.HNSW_EF_SEARCH


def test_hybrid_hits_are_both_rankings_in_one_statement(session: Session, catalog: dict[str, Any]) -> None:
    query = _unit(catalog["rng"])
    sources = catalog["sources"]
    semantic = queries.semantic_hits(session, query, sources, 8)
    keyword = keyword_hits_of(session, ["invoice | ledger"], sources, 8)[0]
    assert keyword
    assert semantic
    with statements(session) as sent:
        both = queries.hybrid_hits(session, query, "invoice | ledger", sources, 8)
    assert len(sent) == 1
    assert [(h.table_id, round(h.score, 5)) for h in both[0]] == [(h.table_id, round(h.score, 5)) for h in semantic]
    assert [(h.table_id, round(h.score, 5)) for h in both[1]] == [(h.table_id, round(h.score, 5)) for h in keyword]
    assert queries.hybrid_hits(session, query, None, sources, 8) == (both[0], [])
    assert queries.hybrid_hits(session, None, None, sources, 8) == ([], [])


def test_several_word_queries_are_ranked_in_one_statement(session: Session, catalog: dict[str, Any]) -> None:
    sources = catalog["sources"]
    texts = ["invoice | ledger", "payment", "customer & payment"]
    with statements(session) as sent:
        found = keyword_hits_of(session, texts, sources, 8)
    assert len(sent) == 1
    assert all(found)
    for query, hits in zip(texts, found, strict=True):
        alone = queries.hybrid_hits(session, None, query, sources, 8)[1]
        assert [(h.table_id, round(h.score, 5)) for h in hits] == [(h.table_id, round(h.score, 5)) for h in alone]
    assert keyword_hits_of(session, [], sources, 8) == []
    assert keyword_hits_of(session, texts, [], 8) == [[], [], []]


def test_semantic_among_ranks_only_the_given_tables_for_each_vector_in_one_statement(
    session: Session, catalog: dict[str, Any]
) -> None:
    first, second = _unit(catalog["rng"]), _unit(catalog["rng"])
    everything = brute_force(catalog, first, catalog["sources"])
    given = sorted(t for t, _ in everything[::3])  # a third of the tables, from both sources
    with statements(session) as sent:
        among = semantic_among(session, [first, second], given)
    assert len(sent) == 1
    for vector, hits in zip((first, second), among, strict=True):
        expected = [(t, round(score, 4)) for t, score in brute_force(catalog, vector, catalog["sources"]) if t in given]
        assert [(h.table_id, round(h.score, 4)) for h in hits] == expected
        assert all(h.source_id == catalog["owner"][h.table_id] for h in hits)
    assert semantic_among(session, [first], []) == [[]]


def test_a_searchs_rankings_notes_and_values_come_in_one_statement_as_each_alone(
    session: Session, catalog: dict[str, Any]
) -> None:
    sources = catalog["sources"]
    rng = catalog["rng"]
    table_id = next(t for t in catalog["owner"] if t not in catalog["invisible"])
    note = Note(text="ledger entries by month", author_platform="slack", author_id="U1", private=False)
    note.tsv = func.to_tsvector("simple", note.text)
    note.embedding = _unit(rng)
    session.add(note)
    session.flush()
    session.add(NoteTable(note_id=note.id, table_id=table_id))
    search_values.sync_values(
        session,
        sources[0],
        {
            (table_id, "region", "north ledger", None),
            (table_id, "kind", "ledger", None),
            (table_id, "pay_cd", "01", "ledger"),
        },
    )
    session.flush()
    texts = ["invoice | ledger", "payment"]
    vectors = [_unit(rng), _unit(rng)]
    notes = NoteQuery("ledger", _unit(rng), None, 10, -1.0)
    asked = RankingQuery(sources, 8, True, texts, vectors, [table_id], notes=notes, values=("'ledger'", 50))
    with statements(session) as sent:
        together = search_batch.rankings(session, asked)
    assert len(sent) == 1
    assert together.keyword == keyword_hits_of(session, texts, sources, 8, bm25=True)
    found = {table_id} | {h.table_id for hits in together.keyword for h in hits}
    assert together.among == semantic_among(session, vectors, sorted(found))
    assert together.notes == note_hits(session, "ledger", notes.vector, sources, None, 10, -1.0)
    assert [h.text for h in together.notes] == ["ledger entries by month"] * 2  # by words first, then by meaning
    # a code is found by its meaning, and comes back as the code with that meaning
    assert [(v.value, v.column, v.meaning) for v in together.values] == [
        ("ledger", "kind", None),
        ("01", "pay_cd", "ledger"),
        ("north ledger", "region", None),
    ]
    assert together.values == search_batch.rankings(session, RankingQuery(sources, 0, values=("'ledger'", 50))).values


def test_searches_of_one_shape_send_one_statement_text_with_their_values_as_parameters(
    session: Session, catalog: dict[str, Any]
) -> None:
    """A search's statements are built once per shape (how many texts and vectors, which rankings): the driver sends
    the same text each time, which PostgreSQL prepares, and the values still decide the hits."""
    sources = catalog["sources"]
    rng = catalog["rng"]
    asked = [
        RankingQuery(sources, 8, True, ["invoice | ledger"], [_unit(rng)], [], values=("'ledger'", 50)),
        RankingQuery(sources[:1], 8, True, ["stock"], [_unit(rng)], [], values=("'stock'", 50)),
    ]
    search_stats.search_stats(session)  # read once per transaction, before the statements counted here
    with statements(session) as sent:
        found = [search_batch.rankings(session, query) for query in asked]
        vectors = [_unit(rng), _unit(rng)]
        nearest = [queries.semantic_hits(session, vector, sources, 5) for vector in vectors]
    assert len(sent) == 4
    assert sent[0] == sent[1]
    assert sent[2] == sent[3]
    assert found[0].keyword != found[1].keyword
    assert found[1].keyword == keyword_hits_of(session, ["stock"], sources[:1], 8, bm25=True)
    assert all(catalog["owner"][h.table_id] == sources[0] for h in found[1].keyword[0])
    for vector, hits in zip(vectors, nearest, strict=True):
        assert [(h.table_id, round(h.score, 6)) for h in hits] == [
            (t, round(score, 6)) for t, score in brute_force(catalog, vector, sources)[:5]
        ]


def test_keyword_hits_leave_out_invisible_tables_and_other_sources(session: Session, catalog: dict[str, Any]) -> None:
    first = catalog["sources"][0]
    hits = keyword_hits_of(session, ["payment"], [first], 50)[0]
    assert hits
    assert all(catalog["owner"][h.table_id] == first for h in hits)
    assert catalog["invisible"].isdisjoint(h.table_id for h in hits)  # table 3's words are "payment"


def test_search_stats_are_read_once_per_transaction_until_indexing_changes_them(
    session: Session, catalog: dict[str, Any]
) -> None:
    first = catalog["sources"][0]
    with statements(session) as sent:
        assert queries.chunk_count(session, [first]) == 27  # 30 chunks, 3 of them on the invisible table
        assert queries.common_words(session) == set()
    assert len(sent) <= 1
    search_index.refresh_common_words(session, share=0.2, min_chunks=1)
    stored = set(session.scalars(text("SELECT word FROM search_common_words")))
    assert stored
    assert queries.common_words(session) == stored
    session.execute(text("UPDATE source_tables SET visible = true"))
    search_index.set_chunk_count(session, first)
    assert queries.chunk_count(session, [first]) == 30


def test_the_search_context_reads_sources_statistics_and_examples_in_one_statement(
    session: Session, catalog: dict[str, Any]
) -> None:
    first, second = catalog["sources"]
    with statements(session) as sent:
        context = search_stats.search_context(session)
        # this file's sources, in order (another file's test in the same process may have left one of its own)
        assert [s.name for s in context.sources if s.name in {"q0", "q1"}] == ["q0", "q1"]
        assert context.any_approved_example is False
        assert context.stats.searched([first, second]) == 27 + 30
        assert queries.chunk_count(session, [second]) == 30  # the statistics came with it
        assert search_stats.search_context(session) is context
    assert len(sent) == 1
    session.add(
        VerifiedExample(
            question="q",
            database="q0",
            sql="SELECT 1",
            tables=["T0_0"],
            status="approved",
            proposed_by_platform="slack",
            proposed_by="U1",
        )
    )
    session.flush()
    search_index.set_chunk_count(session, first)  # indexing forgets the context with the statistics
    assert search_stats.search_context(session).any_approved_example is True


def test_note_hits_come_in_one_statement_word_matches_first(session: Session, catalog: dict[str, Any]) -> None:
    rng = catalog["rng"]
    table_id = next(t for t in catalog["owner"] if t not in catalog["invisible"])
    query = _unit(rng)
    close = (np.asarray(query) + 0.2 * np.asarray(_unit(rng))).tolist()
    for body, vector in (("refunds are booked as negative payments", _unit(rng)), ("regional figures", close)):
        note = Note(text=body, author_platform="slack", author_id="U1", tsv=func.to_tsvector("simple", body))
        note.embedding = vector
        session.add(note)
        session.flush()
        session.add(NoteTable(note_id=note.id, table_id=table_id))
    session.flush()
    with statements(session) as sent:
        hits = note_hits(session, "refunds", query, catalog["sources"], None, 10, 0.5)
    assert len(sent) == 1
    assert [h.text for h in hits] == ["refunds are booked as negative payments", "regional figures"]
    assert hits[0].score > 1.0 > hits[1].score >= 0.5


def test_text_ranks_rank_each_text_like_a_stored_chunk_in_one_statement(
    session: Session, catalog: dict[str, Any]
) -> None:
    first = catalog["sources"][0]
    stored = {h.table_id: h.score for h in keyword_hits_of(session, ["customer & payment"], [first], 50)[0]}
    table_id = next(iter(stored))
    texts = session.scalars(
        text("SELECT text FROM search_chunks WHERE table_id = :t ORDER BY ordinal"), {"t": table_id}
    ).all()
    with statements(session) as sent:
        ranks = queries.text_ranks(session, [*texts, "nothing to see"], "customer & payment")
    assert len(sent) == 1
    assert ranks[-1] is None
    assert max(r for r in ranks if r is not None) == pytest.approx(stored[table_id])


def test_tables_without_cards_read_them_later_in_one_statement(session: Session, catalog: dict[str, Any]) -> None:
    ids = sorted(catalog["owner"])[:6]
    session.execute(
        text("UPDATE source_tables SET card = jsonb_build_object('table', name) WHERE id = ANY(:i)"), {"i": ids}
    )
    session.expire_all()
    rows = queries.tables(session, ids, with_cards=False)
    with statements(session) as sent:
        queries.load_cards(session, rows, ids[:3])
        cards = [rows[t].card for t in ids[:3]]
        queries.load_cards(session, rows, ids[:3])  # already read: nothing sent
    assert len(sent) == 1
    assert cards == [{"table": rows[t].name} for t in ids[:3]]
    with statements(session) as sent:
        assert rows[ids[4]].card == {"table": rows[ids[4]].name}  # one not loaded is read when first used
    assert len(sent) == 1
    assert queries.tables(session, ids)[ids[5]].card == {"table": rows[ids[5]].name}


def test_the_leading_tables_column_names_come_with_the_rows_in_one_statement(
    session: Session, catalog: dict[str, Any]
) -> None:
    ids = sorted(catalog["owner"])[:5]
    for ordinal, name in enumerate(("Order_ID", "Amount")):
        session.add(TableColumn(table_id=ids[0], ordinal=ordinal, name=name, data_type="text"))
    session.add(TableColumn(table_id=ids[3], ordinal=0, name="Region", data_type="text"))
    session.flush()
    session.expire_all()
    with statements(session) as sent:
        rows, names = search_rows.tables_and_column_names(session, ids, [ids[0], ids[1], ids[2]])
    assert len(sent) == 1
    assert sorted(rows) == ids
    assert "card" in sa_inspect(rows[ids[0]]).unloaded  # the cards are left unread, as `tables` leaves them
    assert names == {ids[0]: frozenset({"order_id", "amount"})}  # ids[3] has columns but was not asked for
    assert names == {t: n for t, n in search_rows.column_names(session, ids[:3]).items()}
    assert search_rows.tables_and_column_names(session, [], ids) == ({}, {})


def test_common_words_of_a_large_index_come_from_a_sample(
    session: Session, catalog: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    total = int(session.scalar(text("SELECT count(*) FROM search_chunks")) or 0)
    rows = session.execute(text("SELECT word, ndoc FROM ts_stat('SELECT tsv FROM search_chunks')")).all()
    exact: dict[str, int] = {str(w): int(n) for w, n in rows}
    monkeypatch.setattr(search_index, "COMMON_WORD_SAMPLE", total // 2)
    search_index.refresh_common_words(session, share=0.1, min_chunks=1)
    stored = session.execute(text("SELECT word, documents FROM search_common_words")).all()
    found: dict[str, int] = {str(w): int(n) for w, n in stored}
    frequent = {w for w, n in exact.items() if n > 0.3 * total}
    rare = {w for w, n in exact.items() if n < 0.02 * total}
    assert frequent
    assert frequent <= set(found)
    assert rare.isdisjoint(found)  # e.g. each table's own token
    assert all(0.5 * exact[w] <= found[w] <= 2 * exact[w] for w in frequent)  # counts scaled to the whole index
