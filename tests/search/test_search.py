from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy import event

from core.access.permissions import Principal
from search.service import Encoders, SearchInputError, SearchRequest, search_tables
from tests.search.conftest import World


def names(result) -> list[str]:
    return [c.table for c in result.candidates]


def _copies_after_every_live_table(result) -> None:
    copies = [i for i, c in enumerate(result.candidates) if c.copy_of is not None]
    live = [i for i, c in enumerate(result.candidates) if c.copy_of is None]
    assert copies, names(result)
    assert live, names(result)
    assert max(live) < min(copies), names(result)


def test_live_table_first_and_copies_after_every_live_candidate(world: World) -> None:
    result = world.search("how many orders were placed?", databases=["erp"], k=30)
    order = names(result)
    assert order[0] == "ORD_MST"
    assert {"ORD_MST_BAK", "ORD_MST_202312"} <= set(order)
    _copies_after_every_live_table(result)
    first = result.candidates[0]
    assert first.role == "live"
    assert "semantic" in first.matched_by
    bak = next(c for c in result.candidates if c.table == "ORD_MST_BAK")
    assert bak.copy_of == "ORD_MST"
    assert bak.role == "backup"


def test_copies_take_no_slot_of_a_live_table(world: World) -> None:
    result = world.search("how many orders were placed?", databases=["erp"], k=3)
    assert names(result)[0] == "ORD_MST"
    assert all(c.copy_of is None for c in result.candidates[:3])
    assert {c.table for c in result.candidates[3:]} == {"ORD_MST_BAK", "ORD_MST_202312"}


@pytest.mark.parametrize(
    ("question", "copy"),
    [
        ("how many orders are in ORD_MST_BAK?", "ORD_MST_BAK"),
        ("how many orders does the backup of the order master hold?", "ORD_MST_BAK"),
        ("orders in the 2023-12 copy of the order table", "ORD_MST_202312"),
    ],
)
def test_a_copy_the_question_names_ranks_first(world: World, question: str, copy: str) -> None:
    result = world.search(question, databases=["erp"], k=8)
    assert names(result)[0] == copy, names(result)


class PrefersCopies:
    """A reranker that scores copies highest: the order must still put the live table first."""

    def score(self, question: str, documents: Sequence[str]) -> list[float]:
        return [10.0 if "copy of" in d else 0.0 for d in documents]


def test_live_table_first_even_when_the_reranker_prefers_a_copy(world: World) -> None:
    world.note("erp", "ORD_MST_BAK", "quarterly audit snapshot of orders kept by finance")
    adversarial = World(world.installation, Encoders(world.encoders.embedder, PrefersCopies()))
    result = adversarial.search("how many orders in the quarterly audit", databases=["erp"], k=30)
    order = names(result)
    assert "note" in next(c for c in result.candidates if c.table == "ORD_MST_BAK").matched_by
    assert order.index("ORD_MST") < order.index("ORD_MST_BAK")
    _copies_after_every_live_table(result)


def test_a_question_about_the_backup_still_finds_it(world: World) -> None:
    result = world.search("row count difference between last month's backup and the current orders table", k=8)
    assert "ORD_MST_BAK" in names(result)


def test_a_column_deep_in_a_wide_table_finds_the_table(world: World) -> None:
    result = world.search("which satellite uplink frequency in MHz do we use?", k=5)
    assert "PLM_SPEC_SHEET" in names(result)


def test_a_word_only_in_a_note_brings_the_table_in_with_the_note(world: World) -> None:
    world.note("erp", "RET_DTL", "the zorblax campaign refunds are recorded here")
    result = world.search("zorblax campaign", k=8)
    hit = next(c for c in result.candidates if c.table == "RET_DTL")
    assert "note" in hit.matched_by
    assert any("zorblax" in n["text"] for n in hit.notes)


def test_private_notes_are_only_seen_by_their_author(world: World) -> None:
    world.note("erp", "PAY_HIST", "the quuxfrobnicate reconciliation lives here", private=True, author="U_SALES")
    mine = world.search("quuxfrobnicate reconciliation", user="U_SALES", k=8)
    assert "PAY_HIST" in names(mine)
    theirs = world.search("quuxfrobnicate reconciliation", user="U_GUEST", k=8)
    for candidate in theirs.candidates:
        assert all("quuxfrobnicate" not in n["text"] for n in candidate.notes)
        assert not (candidate.table == "PAY_HIST" and "note" in candidate.matched_by)


def test_denied_tables_are_named_but_never_returned(world: World) -> None:
    result = world.search("employee salaries", user="U_SALES", databases=["erp"], k=8)
    assert "EMP_MST" not in names(result)
    assert "erp.EMP_MST" in result.denied_tables
    guest = world.search("employee salaries", user="U_GUEST", k=8)
    assert "EMP_MST" not in names(guest)
    assert all(c.table.startswith(("ORD_", "CUST_", "CODE_")) for c in guest.candidates)
    assert guest.searched.databases == ["erp"], "the guest may query erp only"


def set_visible(world: World, database: str, table_name: str, visible: bool) -> None:
    from core.store.repositories import catalog as catalog_repo
    from core.store.repositories import sources as source_repo

    with world.installation.store.transaction() as session:
        source = source_repo.by_name(session, database)
        assert source is not None
        table = catalog_repo.find_table(session, source.id, table_name)
        assert table is not None
        table.visible = visible


def test_invisible_tables_never_appear(world: World) -> None:
    set_visible(world, "erp", "SHIP_HIST", False)
    try:
        result = world.search("shipment tracking numbers and carriers", databases=["erp"], k=30)
        assert "SHIP_HIST" not in names(result)
    finally:
        set_visible(world, "erp", "SHIP_HIST", True)


def test_candidates_from_two_databases_carry_their_database(world: World) -> None:
    result = world.search("customers", databases=["erp", "billing"], k=10)
    databases = {c.database for c in result.candidates}
    assert databases == {"erp", "billing"}
    assert all(c.marked_database for c in result.candidates)
    assert {("billing", "BILL_CUST"), ("erp", "CUST_MST")} <= {(c.database, c.table) for c in result.candidates}


def test_pins_restrict_the_search(world: World) -> None:
    result = world.search("customers", databases=["billing"], k=10)
    assert {c.database for c in result.candidates} == {"billing"}
    assert result.searched.databases == ["billing"]


def test_database_selection_skips_irrelevant_databases(world: World) -> None:
    result = world.search("how many orders shipped to Busan last month?")
    assert result.searched.total == 4
    assert "concerts" not in result.searched.databases
    assert "erp" in result.searched.databases
    assert result.searched.describe() == f"searched {len(result.searched.databases)} of 4 databases"


def test_terms_are_searched_and_fused(world: World) -> None:
    result = world.search("what did they buy", databases=["erp"], terms=["products", "order lines"], k=8)
    assert {"PRD_MST", "ORD_DTL_H"} <= set(names(result))


def test_candidates_carry_what_the_model_needs(world: World) -> None:
    # this test is about a candidate's fields; where tables rank is the ranking tests' concern
    found = {c.table: c for c in world.search("order status codes", databases=["erp"], k=3).candidates}
    assert "ORD_MST" in found, sorted(found)
    orders = found["ORD_MST"]
    assert orders.engine is not None
    assert orders.engine.startswith("sqlite")
    assert "STATUS_CODE" in orders.codes
    assert "REMARK" in orders.watch
    assert any("CUST_MST" in j for j in orders.joins)
    assert orders.head.startswith("Table ORD_MST in erp")


@pytest.mark.parametrize(
    ("question", "options", "message"),
    [
        ("", {}, "the question is empty"),
        ("   ", {}, "the question is empty"),
        ("orders", {"k": 0}, "k must be between 1 and 30"),
        ("orders", {"k": 1000}, "k must be between 1 and 30"),
        ("orders", {"databases": ["nope"]}, "there is no database named 'nope'"),
    ],
)
def test_bad_input(world: World, question: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(SearchInputError, match=message):
        world.search(question, **options)


def test_pinning_a_database_the_user_may_not_query(world: World) -> None:
    with pytest.raises(SearchInputError, match="you may not query database 'billing'"):
        world.search("invoices", user="U_GUEST", databases=["billing"])


def test_a_year_given_as_a_term_does_not_rank_tables_named_after_it_first(world: World) -> None:
    question = "How many orders were placed in 2024?"
    for values in (["2024"], ["2024-01", " 2024/06/30 "]):
        assert names(world.search(question, databases=["erp"], terms=values)) == names(
            world.search(question, databases=["erp"])
        )
    with_year = world.search(question, databases=["erp"], terms=["ORD_MST", "2024"])
    assert names(with_year) == names(world.search(question, databases=["erp"], terms=["ORD_MST"]))
    # a term with words in it is searched on its own as before
    sales = world.search("What were the sales in 2024?", databases=["erp"], terms=["sales 2024"])
    assert names(sales)[0] == "SALES_2024"


def test_a_view_reading_a_hidden_table_is_not_returned(world: World) -> None:
    """Search reads tables without their cards; whether a view is seen still comes from what it reads."""
    from core.store.repositories import catalog as catalog_repo
    from core.store.repositories import sources as source_repo

    def make_view(reads: list[list[str | None]] | None) -> dict[str, object]:
        with world.installation.store.transaction() as session:
            source = source_repo.by_name(session, "erp")
            assert source is not None
            table = catalog_repo.find_table(session, source.id, "SHIP_HIST")
            assert table is not None
            before = dict(table.card or {})
            table.card = {**before, "kind": "view", "reads": reads} if reads is not None else before
            return before

    question = "shipment tracking numbers and carriers"
    assert "SHIP_HIST" in names(world.search(question, user="U_SALES", databases=["erp"], k=8))
    stored = make_view([[None, "SHIP_HIST"], [None, "EMP_MST"]])
    try:
        result = world.search(question, user="U_SALES", databases=["erp"], k=8)
        assert "SHIP_HIST" not in names(result)
        assert "erp.SHIP_HIST" in result.denied_tables
        assert "SHIP_HIST" in names(world.search(question, databases=["erp"], k=8)), "an operator sees every view"
    finally:
        with world.installation.store.transaction() as session:
            source = source_repo.by_name(session, "erp")
            assert source is not None
            table = catalog_repo.find_table(session, source.id, "SHIP_HIST")
            assert table is not None
            table.card = stored


def test_a_search_sends_few_statements_whatever_signals_it_runs(world: World) -> None:
    """Sources and statistics in one statement, the question's meaning ranking in another, then the words
    rankings, the phrases' meaning rankings, notes and values in one, the rows with their column names in one."""
    sent: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    with world.installation.store.transaction() as session:
        event.listen(session.connection(), "before_cursor_execute", seen)
        result = search_tables(
            session,
            Principal.for_operator(),
            SearchRequest("total invoice amount per customer and region in 2024", terms=["invoice lines"]),
            world.encoders,
            None,
        )
    assert result.candidates
    assert result.parts  # the question was cut into phrases
    # 11 as measured: five before the fusion (sources, the question's meaning, the term's meaning and words, the
    # rest of the rankings), then the rows, join expansion's reads, the cards and the notes of the shown tables
    assert len(sent) <= 11, [s[:70] for s in sent]


def test_a_code_group_or_meaning_the_question_names_leads_to_the_table_coded_by_it(world: World) -> None:
    """The sample ERP's common codes: CODE_DTL holds every code group's codes and meanings, CODE_MST names the
    groups. The question's "product category" and "credit card" are about the products and the orders."""
    found = world.search("Which product category has the most products?", databases=["erp"], k=4)
    assert [c.table for c in found.candidates[:2]] == ["PRD_MST", "CODE_MST"]
    assert found.candidates[0].values == [{"column": "CTGRY_CD", "group": "Product category"}]
    paid = world.search("How many orders were paid by credit card?", databases=["erp"], k=4)
    names = [c.table for c in paid.candidates]
    # other tests' notes on the session's world move the logs and histories around; the orders stay ahead of the
    # code table that only spells the meaning out
    assert "ORD_MST" in names, names
    orders = paid.candidates[names.index("ORD_MST")]
    assert {"column": "PAY_MTHD_CD", "value": "01", "meaning": "Credit card"} in orders.values
    assert "CODE_DTL" not in names or names.index("CODE_DTL") > names.index("ORD_MST")
