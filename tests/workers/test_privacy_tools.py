"""Each tool's redaction in privacy mode (`workers.tools.privacy`): the real tools on the sample ERP, once as a turn
in privacy mode runs them and once as any other, so each check can fail; and the pieces a tool uses on text an
engine or analysis really writes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any, cast

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from catalog.connectors.base import ColumnInfo
from catalog.misuse import columns_to_watch
from catalog.profiling import ColumnProfile
from core.access.permissions import Principal
from core.access.users import UserRef
from core.answer.values import ValueKind
from search.notes import save_note
from tests.support import POSTGRES_SERVER
from tests.turn_world import TurnWorld
from workers.tools.base import Conversation, SqlRecord, ToolContext
from workers.tools.card_tool import run_card
from workers.tools.privacy import (
    card_without_values,
    error_without_values,
    head_without_values,
    result_shape,
    watch_without_values,
)
from workers.tools.search_tool import run_search
from workers.tools.sql_tool import run as run_sql
from workers.turns.private_answers import NO_ROWS, private_answer, sql_without_literals


def _context(turn_world: TurnWorld, session: Any, *, schema_only: bool) -> ToolContext:
    return ToolContext(
        session=session,
        settings=turn_world.settings,
        principal=Principal.for_operator(),
        viewer=None,
        author=UserRef("slack", "U_SALES"),
        conversation=Conversation("slack", "T1", "C1", "privacy tools", private=False),
        encoders=turn_world.encoders,
        pins=[],
        user_texts=["orders by city"],
        schema_only=schema_only,
    )


@pytest.fixture
def both(turn_world: TurnWorld) -> Iterator[tuple[ToolContext, ToolContext]]:
    """(a turn's context without privacy mode, the same in privacy mode), on the sample ERP."""
    with turn_world.installation.store.transaction() as session:
        yield _context(turn_world, session, schema_only=False), _context(turn_world, session, schema_only=True)


def _erp(turn_world: TurnWorld, sql: str) -> list[Any]:
    with sqlite3.connect(turn_world.erp_path) as conn:
        return [row[0] for row in conn.execute(sql)]


def test_a_card_keeps_its_structure_and_loses_its_values(
    turn_world: TurnWorld, both: tuple[ToolContext, ToolContext]
) -> None:
    plain, private = both
    arguments = {"database": "erp", "table": "ORD_MST"}
    shown, held = run_card(plain, arguments).text, run_card(private, arguments).text
    meanings = _erp(turn_world, "SELECT CODE_NM FROM CODE_DTL WHERE CODE_GRP = 'ORD_STAT'")
    top_city = _erp(turn_world, "SELECT SHIP_CITY FROM ORD_MST GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1")[0]
    first_day = _erp(turn_world, "SELECT MIN(ORD_DT) FROM ORD_MST")[0]
    assert [m for m in meanings if m in shown]  # code meanings
    for value in [top_city, first_day, "ORD_STAT"]:
        assert value in shown  # frequent values, ranges, the code group
    for value in [*meanings, top_city, first_day, "ORD_STAT"]:
        assert value not in held
    for kept in ["ORD_NO", "STATUS_CODE", "PK", "FK", "distinct 20,000", "20,000 rows", "CUST_MST"]:
        assert kept in held
    assert "holds codes explained in CODE_DTL (values withheld: privacy mode)" in held


def test_comments_lose_code_lists_and_quoted_values() -> None:
    """Comments are schema, but an operator may write values in them: a comment analysis read codes from is left
    out, quoted text in others becomes "…", and a comment without values is kept."""
    card: dict[str, Any] = {
        "table": "SHIP_HIST",
        "comment": "Shipments; 'KP' rows are parcels",
        "purpose": "Shipments; 'KP' rows are parcels",
        "sample": [["1", "KP"]],
        "columns": [
            {
                "name": "CARRIER_CD",
                "comment": "carrier: KP=Korea Post, CJ=CJ Logistics",
                "codes": {"KP": "Korea Post", "CJ": "CJ Logistics"},
                "codes_source": "column comment",
            },
            {"name": "SHIP_CITY", "comment": 'city shipped to, e.g. "Busan"'},
            {"name": "SHIP_DT", "comment": "the day the parcel left the warehouse"},
        ],
    }
    held = card_without_values(card)
    text = repr(held)
    for value in ["KP", "Korea Post", "CJ Logistics", "Busan"]:
        assert value not in text
    comments = [c.get("comment") for c in held["columns"]]
    assert comments == [
        "lists the column's codes (values withheld: privacy mode)",
        "city shipped to, e.g. …",
        "the day the parcel left the warehouse",
    ]
    assert held["comment"] == held["purpose"] == "Shipments; … rows are parcels"
    assert card["columns"][0]["comment"].startswith("carrier: KP")  # the stored card is untouched


def test_a_soft_delete_flag_is_watched_without_its_values(
    turn_world: TurnWorld, both: tuple[ToolContext, ToolContext]
) -> None:
    plain, private = both
    shown = run_card(plain, {"database": "erp", "table": "WH_MST"}).text
    held = run_card(private, {"database": "erp", "table": "WH_MST"}).text
    assert "soft-delete/active flag (Y" in shown
    assert "soft-delete/active flag; current rows need a filter on it" in held
    assert "(Y" not in held


def test_notes_are_counted_not_quoted(
    turn_world: TurnWorld, both: tuple[ToolContext, ToolContext], forget_notes: None
) -> None:
    plain, private = both
    save_note(
        plain.session,
        plain.principal,
        turn_world.encoders.embedder,
        database="erp",
        tables=["WH_MST"],
        text="Warehouse W09 in Pohang closed in March",
        author=plain.author,
        private=False,
    )
    assert "Warehouse W09 in Pohang" in run_card(plain, {"database": "erp", "table": "WH_MST"}).text
    held = run_card(private, {"database": "erp", "table": "WH_MST"}).text
    assert "Pohang" not in held
    assert "1 note from users (text withheld: privacy mode" in held
    found = run_search(private, {"question": "warehouse Pohang closed", "databases": ["erp"]}).text
    assert "Pohang" not in found.replace("warehouse Pohang closed", "")


def test_search_candidates_name_coded_columns_without_codes_or_value_hits(
    turn_world: TurnWorld, both: tuple[ToolContext, ToolContext]
) -> None:
    plain, private = both
    city = _erp(turn_world, "SELECT SHIP_CITY FROM ORD_MST GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1")[0]
    arguments = {"question": f"orders shipped to {city.lower()}", "databases": ["erp"]}
    shown, held = run_search(plain, arguments).text, run_search(private, arguments).text
    assert "codes: " in shown
    assert f"= '{city}'" in shown  # the value index found the city the question names
    assert "codes: " not in held
    assert city not in held  # the question has it in lower case
    assert "coded columns (values withheld: privacy mode): " in held
    assert "erp.ORD_MST [live]" in held


def test_sql_rows_reach_the_answer_and_only_their_shape_the_model(
    turn_world: TurnWorld, both: tuple[ToolContext, ToolContext]
) -> None:
    plain, private = both
    sql = "SELECT SHIP_CITY, COUNT(*) AS ORDERS, SUM(TOT_AMT) AS TOTAL FROM ORD_MST GROUP BY SHIP_CITY"
    shown = run_sql(plain, {"database": "erp", "sql": sql}).text
    held = run_sql(private, {"database": "erp", "sql": sql}).text
    city = _erp(turn_world, "SELECT SHIP_CITY FROM ORD_MST GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1")[0]
    assert city in shown
    assert city not in held
    assert held.splitlines()[1] == "Columns: SHIP_CITY (text), ORDERS (count), TOTAL (amount)"
    assert "Rows: several." in held
    assert private.sql_runs[-1].rows == plain.sql_runs[-1].rows  # the user's answer gets every row
    empty = run_sql(private, {"database": "erp", "sql": "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Atlantis'"})
    assert "Rows: one, holding only NULL or 0: nothing matched." in empty.text


def test_an_sql_error_keeps_what_the_statement_holds_and_its_hint(both: tuple[ToolContext, ToolContext]) -> None:
    _plain, private = both
    failed = run_sql(private, {"database": "erp", "sql": "SELECT SHIP_CTY FROM ORD_MST WHERE TOT_AMT > 100"})
    assert failed.is_error
    assert "SHIP_CTY" in failed.text
    assert "Closest to SHIP_CTY: SHIP_CITY." in failed.text


def test_a_value_an_engine_quotes_in_its_error_is_withheld() -> None:
    """A real PostgreSQL error that quotes the row value it failed on."""
    sql = "SELECT CAST(name AS integer) FROM (VALUES ('Bukhan Foods Corp.'), ('17')) AS t(name) WHERE name <> '42'"
    engine = create_engine(POSTGRES_SERVER)
    try:
        with engine.connect() as conn, pytest.raises(DBAPIError) as info:
            conn.execute(text(sql.replace("'Bukhan Foods Corp.'", "'Bukhan Foods Corp.' || ''")))
    finally:
        engine.dispose()
    message = f"error: {str(info.value.orig).splitlines()[0]}"
    assert "Bukhan Foods Corp." in message
    held = error_without_values(message, "SELECT CAST(name AS integer) FROM customers WHERE name <> '42'")
    assert "Bukhan" not in held
    assert "invalid input syntax for type integer" in held
    assert error_without_values('error: near "FORM": syntax error', "SELECT 1 FORM t") == (
        'error: near "FORM": syntax error'
    )
    assert error_without_values("error: Truncated incorrect DOUBLE value: 'C000551' at row 7", "SELECT 1") == (
        "error: Truncated incorrect DOUBLE value: … at row …"
    )


def test_watch_reasons_written_by_analysis_lose_their_values() -> None:
    flag = ColumnInfo(name="USE_YN", data_type="CHAR(1)", family="text", nullable=True)
    profile = ColumnProfile(
        sample_size=100,
        complete=True,
        null_ratio=0.0,
        distinct=2,
        distinct_estimate=2,
        frequent=[("Y", 0.9), ("N", 0.1)],
    )
    reason = columns_to_watch([flag], {"USE_YN": profile}, {"USE_YN"})["USE_YN"]
    assert "Y, N" in reason
    assert watch_without_values(reason) == "soft-delete/active flag; current rows need a filter on it"
    head = "Table WH_MST in erp: live, 6 rows\nPurpose: Warehouses; 'N' rows are closed\nColumns to watch: USE_YN: "
    held = head_without_values(head + reason, {"USE_YN": reason}).splitlines()
    assert held[1:] == [
        "Purpose: Warehouses; … rows are closed",
        "Columns to watch: USE_YN: soft-delete/active flag; current rows need a filter on it",
    ]


def test_result_shape_says_how_many_rows_in_words() -> None:
    kinds = [ValueKind.TEXT, None]
    assert "Rows: none: nothing matched." in result_shape(["A", "B"], kinds, [], False)
    assert "Rows: one." in result_shape(["A", "B"], kinds, [("x", 3)], False)
    assert "Rows: several." in result_shape(["A", "B"], kinds, [("x", 3), ("y", 4)], False)
    assert "more rows than the row cap" in result_shape(["A", "B"], kinds, [("x", 3)] * 5, True)
    assert "Columns: A (text), B" in result_shape(["A", "B"], kinds, [], False)


def test_earlier_sql_is_shown_without_literals_or_the_policy_note() -> None:
    sql = "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan' AND TOT_AMT > 1500.5\n-- for you: rows of X filtered"
    assert sql_without_literals(sql, "sqlite") == "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = ? AND TOT_AMT > ?"
    ranked = "SELECT SHIP_CITY, COUNT(*) FROM ORD_MST WHERE QTY > 5 GROUP BY 1 ORDER BY 2 DESC LIMIT 10 OFFSET 5"
    assert sql_without_literals(ranked, "sqlite") == (
        "SELECT SHIP_CITY, COUNT(*) FROM ORD_MST WHERE QTY > ? GROUP BY 1 ORDER BY 2 DESC LIMIT 10 OFFSET 5"
    )
    assert sql_without_literals("SELEC nothing FROM", "sqlite") is None


def _answered(rows: list[list[Any]], model_text: str, question: str = "How many orders were placed in 2024?") -> str:
    context = ToolContext(
        session=cast(Any, None),
        settings=cast(Any, None),
        principal=Principal.for_operator(),
        viewer=None,
        author=UserRef("slack", "U_SALES"),
        conversation=Conversation("slack", "T1", "C1", "answers", private=False),
        encoders=cast(Any, None),
        pins=[],
        user_texts=[question],
        schema_only=True,
    )
    context.sql_runs.append(SqlRecord("erp", "SELECT COUNT(*) FROM ORD_MST", ["COUNT(*)"], rows, False, None))
    return private_answer(question, model_text, context)


def test_the_private_answer_is_written_from_the_rows() -> None:
    said = "This counts the orders placed in 2024."
    assert _answered([[4750]], said) == f"4,750 orders were placed in 2024.\n{said}"
    assert _answered([[4750]], "There were 4,812 orders.") == "4,750 orders were placed in 2024."  # made up: left out
    assert _answered([], said) == f"{NO_ROWS}\n{said}"
