"""The search signals beyond meaning and words: names written as one run, link tables brought in through the join
graph, values that only rows hold and codes whose meanings the question names (never for a reader who may not see
them), and the question's parts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.store.embedded import EmbeddedServer
from core.store.models import JoinCandidate
from core.store.repositories import directory
from core.text.name_words import NameWords, catalog_words
from search.decomposition import decompose, phrases
from search.join_expansion import named_column
from search.service import SearchResult
from search.values import ValueMatch, value_ranking
from tests.search.conftest import World, one_source_world

ROLES = """\
roles:
  no_place_names:
    grants:
      - database: clinic
        column_masks:
          LOC_REF.LOC_NM: hide
  no_locations:
    grants:
      - database: clinic
        deny: ["LOC_REF"]
  no_links:
    grants:
      - database: clinic
        deny: ["XREF_PT_PHY"]
groups:
  - {platform: slack, group: S_MASKED, roles: [no_place_names]}
  - {platform: slack, group: S_DENIED, roles: [no_locations]}
  - {platform: slack, group: S_NO_LINKS, roles: [no_links]}
"""
FILLER = ("INVOICEHEADER", "SUPPLIERCONTRACT", "EQUIPMENTREGISTER", "STAFFROSTER", "BUDGETLINE", "ROOMBOOKING")


def _build(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE PATIENT (PATIENTID INTEGER PRIMARY KEY, HASFULLNAME TEXT, HASBIRTHDATE DATE);
            CREATE TABLE PHYSICIAN (PHYSICIANID INTEGER PRIMARY KEY, HASFULLNAME TEXT, HASSPECIALTY TEXT);
            CREATE TABLE XREF_PT_PHY (XREFID INTEGER PRIMARY KEY,
                                      PATIENTREF INTEGER REFERENCES PATIENT(PATIENTID),
                                      PHYSICIANREF INTEGER REFERENCES PHYSICIAN(PHYSICIANID), SINCE DATE);
            CREATE TABLE ACCOUNTSRECEIVABLEAGING (AGINGID INTEGER PRIMARY KEY, DAYSOVERDUE INTEGER,
                                                  OPENAMOUNT NUMERIC);
            CREATE TABLE LOC_REF (LOC_CD TEXT PRIMARY KEY, LOC_NM TEXT);
            CREATE TABLE WARD_STAY (STAYID INTEGER PRIMARY KEY, LOC_CD TEXT REFERENCES LOC_REF(LOC_CD), NIGHTS INTEGER);
            """
        )
        for name in FILLER:
            conn.execute(f"CREATE TABLE {name} (ID INTEGER PRIMARY KEY, HASDESCRIPTION TEXT, HASAMOUNT NUMERIC)")
        for code, city in (("L01", "Busan"), ("L02", "Daegu"), ("L03", "Gwangju"), ("L04", "Incheon")):
            conn.execute("INSERT INTO LOC_REF VALUES (?, ?)", (code, city))
        conn.executemany("INSERT INTO WARD_STAY VALUES (?, ?, ?)", [(i, f"L0{i % 3 + 1}", i % 5) for i in range(60)])


@pytest.fixture(scope="module")
def clinic(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    world = one_source_world(store_server, tmp_path_factory, "clinic", _build, ROLES)
    now = datetime.now(UTC)
    with world.installation.store.transaction() as session:
        for user, group_id in (("U_MASKED", "S_MASKED"), ("U_DENIED", "S_DENIED"), ("U_NO_LINKS", "S_NO_LINKS")):
            member = directory.upsert_user(session, platform="slack", user_id=user, synced_at=now)
            group = directory.upsert_group(session, platform="slack", group_id=group_id, synced_at=now)
            directory.replace_members(session, group, [member])
    yield world
    world.installation.store.close()


def names(result: SearchResult) -> list[str]:
    return [c.table for c in result.candidates]


def test_names_written_as_one_run_are_split_into_words() -> None:
    words = NameWords(catalog_words(["CUST_NO", "STAT_CD"]))
    assert words.split("ACCOUNTSPAYABLEANDACCRUEDLIABILITIES") == [
        "accounts",
        "payable",
        "and",
        "accrued",
        "liabilities",
    ]
    assert words.split("CUSTSTATCD") == ["cust", "stat", "cd"]
    assert words.humanise("ORDDTL") == "order detail"
    assert words.split("singer") == ["singer"]  # a word stays whole
    assert words.split("qzxvbnmkj") == ["qzxvbnmkj"]  # no reading into known words: left alone


def test_a_concatenated_name_is_found_by_its_words(clinic: World) -> None:
    result = clinic.search("accounts receivable aging by days overdue", databases=["clinic"], k=3)
    assert names(result)[0] == "ACCOUNTSRECEIVABLEAGING"
    assert "keyword" in result.candidates[0].matched_by


def test_a_link_table_no_question_names_comes_in_through_the_join_graph(clinic: World) -> None:
    question = "list each patient's full name with the full name and specialty of their physician"
    plain = clinic.search(question, databases=["clinic"], k=2, expand_joins=False)
    assert set(names(plain)) == {"PATIENT", "PHYSICIAN"}
    expanded = clinic.search(question, databases=["clinic"], k=3)
    assert set(names(expanded)) == {"PATIENT", "PHYSICIAN", "XREF_PT_PHY"}
    link = next(c for c in expanded.candidates if c.table == "XREF_PT_PHY")
    assert "join" in link.matched_by
    assert sorted(link.through) == ["PATIENT", "PHYSICIAN"]
    assert link.contract()["through"] == link.through
    assert names(expanded).index("XREF_PT_PHY") > min(names(expanded).index(t) for t in link.through)
    denied = clinic.search(question, databases=["clinic"], k=3, user="U_NO_LINKS")
    assert "XREF_PT_PHY" not in names(denied)
    assert {"PATIENT", "PHYSICIAN"} <= set(names(denied))
    assert all("join" not in c.matched_by or "XREF_PT_PHY" not in c.through for c in denied.candidates)


def test_a_value_only_a_row_holds_brings_its_table_in(clinic: World) -> None:
    question = "what happened in Incheon last week?"  # a city no ward stay is coded with
    without = clinic.search(question, databases=["clinic"], k=3, values=False)
    assert all("value" not in c.matched_by and not c.values for c in without.candidates)
    result = clinic.search(question, databases=["clinic"], k=3)
    assert names(result)[0] == "LOC_REF"
    found = result.candidates[0]
    assert "value" in found.matched_by
    assert found.values == [{"column": "LOC_NM", "value": "Incheon"}]
    assert found.contract()["values"] == found.values


def test_a_code_whose_meaning_the_question_names_puts_its_table_before_the_code_table(clinic: World) -> None:
    question = "what happened in Daegu last week?"
    without = clinic.search(question, databases=["clinic"], k=3, values=False)
    assert all(not c.values for c in without.candidates)
    result = clinic.search(question, databases=["clinic"], k=3)
    assert names(result)[:2] == ["WARD_STAY", "LOC_REF"]
    stays, places = result.candidates[:2]
    assert "value" in stays.matched_by
    assert stays.values == [{"column": "LOC_CD", "value": "L02", "meaning": "Daegu"}]  # the code the rows hold
    assert places.values == [{"column": "LOC_NM", "value": "Daegu"}]


def test_a_code_table_spelling_out_a_meaning_another_table_holds_ranks_after_it() -> None:
    labels = [ValueMatch(1, "CODE_NM", "Credit card"), ValueMatch(1, "CODE_NM", "Paid")]
    orders = [ValueMatch(2, "PAY_CD", "01", "Credit card"), ValueMatch(2, "STAT_CD", "20", "Paid")]
    city = [ValueMatch(3, "CITY", "Busan")]
    assert value_ranking({1: labels, 2: orders, 3: city}) == [2, 1, 3]  # the longest text named still leads
    # a label no other table holds as a code's meaning is a value like any other: the table naming more comes first
    assert value_ranking({1: labels, 4: [ValueMatch(4, "NOTE", "Credit card")]}) == [1, 4]
    # nor is a table whose own code means what it spells out
    both = [ValueMatch(6, "PAY_NM", "Credit card"), ValueMatch(6, "PAY_CD", "01", "Credit card")]
    assert value_ranking({6: both, 7: [ValueMatch(7, "PAY_CD", "01", "Credit card")]}) == [6, 7]


@pytest.mark.parametrize("user", ["U_MASKED", "U_DENIED"])
def test_a_value_the_reader_may_not_see_brings_nothing(clinic: World, user: str) -> None:
    question = "what happened in Daegu last week?"
    result = clinic.search(question, databases=["clinic"], k=3, user=user)
    for candidate in result.candidates:
        assert "value" not in candidate.matched_by
        assert not candidate.values
    # the hidden value adds nothing: the same tables, in the same order, as without value matching
    without = clinic.search(question, databases=["clinic"], k=3, user=user, values=False)
    assert names(result) == names(without)
    assert result.denied_tables == without.denied_tables
    if user == "U_DENIED":
        assert "LOC_REF" not in names(result)
    # the ward stays' code meanings come from the code table: no signal for a reader who may not read them there
    wide = clinic.search(question, databases=["clinic"], k=8, user=user)
    stays = next(c for c in wide.candidates if c.table == "WARD_STAY")
    assert not stays.values
    assert "value" not in stays.matched_by


def test_quoted_and_capitalised_words_are_values() -> None:
    parts = decompose('Tell me the last traded value of Alphabet in "Q3 2016"')
    assert ("Alphabet", "value") in [(p.text, p.kind) for p in parts]
    assert ("Q3 2016", "value") in [(p.text, p.kind) for p in parts]
    assert phrases(parts) == ["last traded value"]


def test_the_question_is_cut_into_phrases_values_numbers_and_dates() -> None:
    parts = decompose("Hakon Schuster bought stock on 17 May 2016 for more than 1500 dollars")
    kinds = {(p.text, p.kind) for p in parts}
    assert ("Hakon Schuster", "value") in kinds
    assert ("17 May 2016", "date") in kinds
    assert ("1500", "number") in kinds
    assert ("bought stock", "phrase") in kinds
    assert decompose("How many singers do we have?") == [decompose("How many singers do we have?")[0]]
    assert phrases(decompose("How many singers do we have?")) == []  # one part: the question alone is searched


def test_parts_are_reported_with_the_result(clinic: World) -> None:
    result = clinic.search("patients of physicians in Busan since 2024", databases=["clinic"], k=3)
    assert {"text": "Busan", "kind": "value"} in [p.contract() for p in result.parts]
    assert {"text": "2024", "kind": "date"} in [p.contract() for p in result.parts]


def test_neighbours_of_a_leading_table_keep_their_own_ranking(world: World) -> None:
    """Tables joined to a leading candidate come after the direct hits in the order of their own scores, so a
    neighbour the question names (returned goods: the returns table) is not pushed out by ones it does not."""
    result = world.search("Which customers returned goods?", databases=["erp", "billing"], k=8)
    live = [c for c in result.candidates if c.copy_of is None]
    assert "RET_DTL" in [c.table for c in live]
    neighbours = [c for c in live if c.matched_by[-1:] == ["join"] and "keyword" not in c.matched_by]
    assert len(neighbours) >= 2, [c.table for c in live]
    scores = [c.score for c in neighbours]
    assert scores == sorted(scores, reverse=True), [(c.table, c.score) for c in neighbours]


def test_a_join_column_that_only_names_its_own_table_brings_nothing() -> None:
    """A leader's key column naming the leader itself (`SHIPMENT.SHIPMENTID`) is shared by every table joined to
    it, so it brings none of them; a foreign key naming what the question asks about (`CARRIERID`) does."""
    asked = {"shipment", "shipments", "carrier", "carriers"}
    own_key = JoinCandidate(from_table_id=1, to_table_id=2, from_columns=["SHIPMENTID"], to_columns=["SHIPMENTID"])
    assert not named_column(own_key, 1, asked, "SHIPMENT")
    foreign = JoinCandidate(from_table_id=1, to_table_id=3, from_columns=["CARRIERID"], to_columns=["CARRIERID"])
    assert named_column(foreign, 1, asked, "SHIPMENT")
    assert not named_column(foreign, 1, {"shipment"}, "SHIPMENT")  # the question does not ask about carriers
