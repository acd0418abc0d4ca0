"""The second vector space: a question in another script is searched by the multilingual vectors, anything else as
before; the vectors are made for every chunk, again when a chunk's text changes, and never widen what a user sees."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from catalog.analysis import AnalysisOptions
from core.access.permissions import Principal, resolve_principal
from core.access.users import UserRef
from core.store.embedded import EmbeddedServer
from core.store.models import SearchChunk
from core.store.repositories import directory, search_index
from search.encoders import BiEncoderReranker, Embedder, make_embedder
from search.multilingual import index_multilingual, other_script
from search.service import Encoders, SearchRequest, SearchResult, search_tables
from tests.catalog.analysis_support import Installation, new_installation
from tests.support import default_embedder, isolated_settings, sample_databases
from workers.catalog_refresh import refresh_source

ROLES = """\
roles:
  no_stock:
    grants:
      - database: erp
        deny: ["STK_INV"]
groups:
  - {platform: slack, group: S_NO_STOCK, roles: [no_stock]}
"""


@dataclass
class Erp:
    installation: Installation
    multilingual: Embedder

    def search(self, question: str, *, second: bool = True, user: str | None = None) -> SearchResult:
        embedder = default_embedder()
        encoders = Encoders(embedder, BiEncoderReranker(embedder), self.multilingual if second else None)
        with self.installation.store.transaction() as session:
            principal, viewer = Principal.for_operator(), None
            if user is not None:
                principal = resolve_principal(session, self.installation.settings.file, "slack", user)
                viewer = UserRef("slack", user)
            request = SearchRequest(question, databases=["erp"], k=10)
            return search_tables(session, principal, request, encoders, viewer)


@pytest.fixture(scope="module")
def erp(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Erp]:
    home = tmp_path_factory.mktemp("multilingual-home")
    installation = new_installation(store_server, home)
    paths = sample_databases(tmp_path_factory.mktemp("multilingual-sample"))
    installation.add("erp", f"sqlite:///{paths['erp']}")
    config = home / "tablescout.yaml"
    config.write_text(config.read_text() + ROLES)
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    multilingual = make_embedder("use-multilingual", home)
    report = refresh_source(
        installation.settings,
        installation.store,
        "erp",
        AnalysisOptions(),
        embedder=default_embedder(),
        multilingual=multilingual,
    )
    assert report.analysis.error is None
    assert report.index is not None
    assert report.index.multilingual > 0
    with installation.store.transaction() as session:
        member = directory.upsert_user(session, platform="slack", user_id="U_NO_STOCK", synced_at=datetime.now(UTC))
        group = directory.upsert_group(session, platform="slack", group_id="S_NO_STOCK", synced_at=datetime.now(UTC))
        directory.replace_members(session, group, [member])
    yield Erp(installation, multilingual)
    installation.store.close()


def names(result: SearchResult) -> list[str]:
    return [c.table for c in result.candidates]


@pytest.mark.parametrize(
    ("text", "other"),
    [
        ("2024년에 접수된 주문은 모두 몇 건인가요?", True),
        ("倉庫ごとの在庫数量を教えてください", True),
        ("Сколько заказов было в 2024 году?", True),
        ("How many orders were placed in 2024?", False),
        ("Combien de commandes livrées à Zürich en été?", False),  # Latin letters with accents
        ("ORD_MST 주문 수", False),  # mostly Latin letters: the table's name outweighs two Korean words
        ("2024-03-01", False),
        ("", False),
    ],
)
def test_a_question_is_in_another_script_when_most_of_its_letters_are(text: str, other: bool) -> None:
    assert other_script(text) is other


def test_every_chunk_gets_a_multilingual_vector(erp: Erp) -> None:
    with erp.installation.store.transaction() as session:
        total, with_vector = session.execute(
            select(func.count(), func.count(SearchChunk.ml_embedding)).select_from(SearchChunk)
        ).one()
    assert total > 0
    assert with_vector == total


def test_a_korean_question_finds_the_tables_its_english_twin_finds(erp: Erp) -> None:
    korean = "창고별 재고 수량은 얼마인가요?"  # "What is the stock quantity per warehouse?"
    english = erp.search("What is the stock quantity per warehouse?", second=False)
    assert "STK_INV" in names(english)[:3], names(english)
    found = erp.search(korean)
    assert "STK_INV" in names(found)[:3], names(found)
    assert "semantic" in next(c for c in found.candidates if c.table == "STK_INV").matched_by
    alone = erp.search(korean, second=False)  # MiniLM's vectors only: the table is not among the first three
    assert "STK_INV" not in names(alone)[:3], names(alone)


def test_an_english_question_is_searched_as_before(erp: Erp) -> None:
    question = "Which customers placed the most orders in 2024?"
    assert names(erp.search(question)) == names(erp.search(question, second=False))


def test_a_table_the_user_may_not_see_stays_unseen_in_the_other_space(erp: Erp) -> None:
    found = erp.search("창고별 재고 수량은 얼마인가요?", user="U_NO_STOCK")
    assert "STK_INV" not in names(found)
    assert "erp.STK_INV" in found.denied_tables


def test_a_chunk_whose_text_changes_gets_its_multilingual_vector_again(erp: Erp) -> None:
    store = erp.installation.store
    with store.transaction() as session:
        chunk = session.execute(select(SearchChunk).order_by(SearchChunk.id).limit(1)).scalar_one()
        chunk_id, source_id, table_id = chunk.id, chunk.source_id, chunk.table_id
        assert source_id is not None
        assert chunk.embedding is not None
        changed = chunk.text + " (changed)"
        vector = list(chunk.embedding)
        search_index.upsert_chunk(
            session, chunk_id, source_id, table_id, chunk.kind, chunk.ordinal, changed, "x", vector
        )
    with store.transaction() as session:
        assert session.get(SearchChunk, chunk_id).ml_embedding is None  # type: ignore[union-attr]
    assert index_multilingual(store, source_id, erp.multilingual) == 1
    assert index_multilingual(store, source_id, erp.multilingual) == 0  # nothing left to make
