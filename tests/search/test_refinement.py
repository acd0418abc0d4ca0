"""Two-speed indexing: chunks written by the fast pass are searchable at once by their fast vectors; refinement gives
them the main encoder's vectors in resumable batches, and a refined index searches as one built in a single pass.

The int8 encoder's vectors depend a little on the batch a text is embedded in (activations are quantised per batch:
cosine 0.99 between batchings), so a refined vector is the one-pass vector to that, and near-ties (twin tables) may
change places; the clear first answers do not."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from sqlalchemy import event, func, select

from catalog.analysis import AnalysisOptions
from core.access.permissions import Principal
from core.store.embedded import EmbeddedServer
from core.store.models import SearchChunk
from search.encoders import BiEncoderReranker, Embedder, Vectors
from search.refinement import refine_source
from search.service import ALL_SIGNALS, Encoders, SearchRequest, SearchResult, search_tables
from tests.catalog.analysis_support import Installation, new_installation
from tests.support import default_embedder, fast_embedder, isolated_settings, sample_databases
from workers.catalog_refresh import refresh_source

QUESTIONS = ("how many orders were placed?", "stock quantity per warehouse", "which employees work in sales?")


class Counting:
    """The main encoder, counting the texts it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return self.inner.embed(texts)


@dataclass
class Indexed:
    installation: Installation
    source_id: int

    def search(self, question: str, signals: frozenset[str] = ALL_SIGNALS, fast: bool = True) -> SearchResult:
        embedder = default_embedder()
        encoders = Encoders(embedder, BiEncoderReranker(embedder), fast=fast_embedder() if fast else None)
        with self.installation.store.transaction() as session:
            request = SearchRequest(question, databases=["erp"], signals=signals)
            return search_tables(session, Principal.for_operator(), request, encoders, None)

    def vectors(self) -> tuple[int, int, int]:
        """(chunks, with their vector, with a fast vector)."""
        with self.installation.store.transaction() as session:
            total, strong, fast = session.execute(
                select(func.count(), func.count(SearchChunk.embedding), func.count(SearchChunk.fast_embedding))
            ).one()
        return int(total), int(strong), int(fast)


def _indexed(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory, fast: bool) -> Indexed:
    home = tmp_path_factory.mktemp("refinement-home")
    installation = new_installation(store_server, home)
    paths = sample_databases(tmp_path_factory.mktemp("refinement-sample"))
    installation.add("erp", f"sqlite:///{paths['erp']}")
    assert installation.settings.database_url is not None
    database_url = installation.settings.database_url.get_secret_value()
    installation.settings = isolated_settings(home, database_url=database_url, multilingual_vectors=False)
    report = refresh_source(
        installation.settings,
        installation.store,
        "erp",
        AnalysisOptions(),
        embedder=default_embedder(),
        fast=fast_embedder() if fast else None,
        refine=False,
    )
    assert report.analysis.error is None
    assert report.source_id is not None
    return Indexed(installation, report.source_id)


@pytest.fixture(scope="module")
def fast_pass(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexed]:
    indexed = _indexed(store_server, tmp_path_factory, fast=True)
    yield indexed
    indexed.installation.store.close()


@pytest.fixture(scope="module")
def one_pass(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexed]:
    indexed = _indexed(store_server, tmp_path_factory, fast=False)
    yield indexed
    indexed.installation.store.close()


def names(result: SearchResult) -> list[str]:
    return [c.table for c in result.candidates]


def test_after_the_fast_pass_tables_are_found_by_meaning(fast_pass: Indexed) -> None:
    total, strong, fast = fast_pass.vectors()
    assert total > 0
    assert (strong, fast) == (0, total)
    meaning = frozenset({"semantic"})  # no ranking by words: the fast vectors alone find the tables
    # The static table is distilled from the int8 model on the machine itself, whose integer kernels differ from one
    # CPU to another (AVX-512 VNNI or not): the fast space puts the table among the first three, not always first.
    for question, table in (("stock quantity per warehouse", "STK_INV"), ("which employees work in sales?", "EMP_MST")):
        found = fast_pass.search(question, signals=meaning)
        assert table in names(found)[:3], names(found)
        assert all("semantic" in c.matched_by for c in found.candidates)
        assert not fast_pass.search(question, signals=meaning, fast=False).candidates
    assert names(fast_pass.search("stock quantity per warehouse"))[0] == "STK_INV"  # every signal


def _statements(indexed: Indexed, question: str) -> list[str]:
    sent: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    embedder = default_embedder()
    encoders = Encoders(embedder, BiEncoderReranker(embedder), fast=fast_embedder())
    with indexed.installation.store.transaction() as session:
        event.listen(session.connection(), "before_cursor_execute", seen)
        search_tables(session, Principal.for_operator(), SearchRequest(question), encoders, None)
    return sent


def test_unrefined_chunks_cost_a_search_no_statement_more(fast_pass: Indexed, one_pass: Indexed) -> None:
    question = "total order amount per customer"
    unrefined = _statements(fast_pass, question)
    refined = _statements(one_pass, question)
    assert len(unrefined) == len(refined), ([s[:70] for s in unrefined], [s[:70] for s in refined])
    assert any("fast_embedding" in s for s in unrefined)
    assert not any("fast_embedding" in s for s in refined)


def test_refinement_resumes_and_ends_with_the_one_pass_index(fast_pass: Indexed, one_pass: Indexed) -> None:
    store = fast_pass.installation.store
    total, _, _ = fast_pass.vectors()
    counting = Counting(default_embedder())
    assert refine_source(store, fast_pass.source_id, counting, batch=5, batches=1) == 5  # stopped after one batch
    assert fast_pass.vectors() == (total, 5, total - 5)
    assert refine_source(store, fast_pass.source_id, counting, batch=5) == total - 5
    assert fast_pass.vectors() == (total, total, 0)  # a refined chunk keeps no fast vector
    assert len(counting.texts) == total  # none embedded twice
    assert refine_source(store, fast_pass.source_id, counting) == 0
    with store.transaction() as session:
        refined = dict(session.execute(select(SearchChunk.text, SearchChunk.embedding)).all())
    with one_pass.installation.store.transaction() as session:
        direct = dict(session.execute(select(SearchChunk.text, SearchChunk.embedding)).all())
    assert refined.keys() == direct.keys()
    assert min(float(np.dot(np.asarray(refined[t]), np.asarray(direct[t]))) for t in direct) > 0.98
    for question in QUESTIONS:
        after, before = fast_pass.search(question), one_pass.search(question)
        assert names(after)[0] == names(before)[0], (names(after), names(before))
        assert len(set(names(after)) ^ set(names(before))) <= 2  # a near-twin at most in another's place
