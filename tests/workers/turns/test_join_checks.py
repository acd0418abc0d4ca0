"""The checks of a statement's joins (`workers.turns.join_checks`), through `answer_checks.check`, on cards written
the way analysis writes them: a join on part of a key both tables hold, and a condition comparing a column with
itself, are doubts; a join on the whole key, one to a table that lacks the rest of the key, and a self-join, are
not."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from sqlglot import parse_one

from workers.tools.base import SqlRecord
from workers.turns.answer_checks import Probes, check
from workers.turns.join_checks import disjoint_joins

CARDS: dict[str, dict[str, Any]] = {
    "LINES": {
        "primary_key": ["ORDER_NO", "LINE_NO"],
        "columns": [{"name": n} for n in ("ORDER_NO", "LINE_NO", "ITEM", "QTY", "AMOUNT")],
    },
    "RETURNS": {
        "primary_key": ["RETURN_NO"],
        "columns": [{"name": n} for n in ("RETURN_NO", "ORDER_NO", "LINE_NO", "RETURN_QTY")],
    },
    "ORDERS": {
        "columns": [{"name": "ORDER_NO", "key": "primary"}, {"name": "CUSTOMER"}, {"name": "TOTAL"}],
    },
    "STOCK": {
        "primary_key": ["SITE", "ITEM"],
        "columns": [{"name": n} for n in ("SITE", "ITEM", "ON_HAND")],
    },
    "STAFF": {"primary_key": ["ID"], "columns": [{"name": "ID"}, {"name": "BOSS_ID"}, {"name": "NAME"}]},
}
NO_PROBES = Probes(held=lambda *_: None, sample=lambda *_: None)


def join_doubts(sql: str, question: str = "How many order lines were returned?") -> list[tuple[str, str]]:
    record = SqlRecord("shop", sql, ["n"], [[1]], False, None)
    verdict = check(question, record, "sqlite", CARDS, [], NO_PROBES)
    return [(d.say, d.hint) for d in verdict.doubts if d.kind == "join"]


def test_a_join_on_part_of_a_key_both_tables_hold_is_a_doubt_naming_the_rest() -> None:
    [(say, hint)] = join_doubts("SELECT COUNT(*) FROM LINES AS l JOIN RETURNS AS r ON l.ORDER_NO = r.ORDER_NO")
    assert say == (
        "I joined LINES and RETURNS on ORDER_NO only; both also have LINE_NO, so rows may be counted more than once."
    )
    assert "join on all of them" in hint


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(*) FROM LINES AS l JOIN RETURNS AS r ON l.ORDER_NO = r.ORDER_NO AND l.LINE_NO = r.LINE_NO",
        "SELECT COUNT(*) FROM LINES JOIN RETURNS ON LINES.LINE_NO = RETURNS.LINE_NO AND LINES.ORDER_NO = "
        "RETURNS.ORDER_NO",
        "SELECT SUM(l.AMOUNT) FROM ORDERS AS o JOIN LINES AS l ON o.ORDER_NO = l.ORDER_NO",  # ORDERS lacks LINE_NO
        "SELECT s.NAME, b.NAME FROM STAFF AS s JOIN STAFF AS b ON s.BOSS_ID = b.ID",  # a self-join
        "SELECT COUNT(*) FROM LINES",
    ],
)
def test_joins_on_the_whole_key_or_to_tables_without_the_rest_are_not_doubted(sql: str) -> None:
    assert join_doubts(sql) == []


def test_a_condition_comparing_a_column_with_itself_is_a_doubt() -> None:
    sql = "SELECT l.ITEM, SUM(l.QTY) FROM STOCK AS s JOIN LINES AS l ON s.SITE = s.SITE AND s.ITEM = l.ITEM GROUP BY 1"
    doubts = join_doubts(sql, "Which item sold the most?")
    assert doubts[0] == (
        "The join compares s.SITE with itself, so it links the tables by nothing and rows may be counted more than "
        "once.",
        "The join condition s.SITE = s.SITE compares a column with itself: join the tables on the columns they share.",
    )


def test_unqualified_columns_are_read_as_the_one_table_that_has_them() -> None:
    sql = "SELECT COUNT(*) FROM LINES JOIN RETURNS ON LINES.ORDER_NO = RETURNS.ORDER_NO AND RETURN_QTY > 0"
    assert len(join_doubts(sql)) == 1
    assert join_doubts("SELECT COUNT(*) FROM ORDERS JOIN STAFF ON CUSTOMER = NAME") == []


GROUPS = {
    ("PRODUCTS", "CATEGORY"): ["B20", "E50", "A10"],
    ("PRODUCTS", "PRODUCT_ID"): ["P1", "P2"],
    ("CODE_GROUPS", "GROUP_NAME"): ["ORDER_STATUS", "PRODUCT_CATEGORY"],
    ("CODES", "CODE"): ["A10", "B20", "90"],
    ("SALES", "PRODUCT_ID"): ["P2", "P1"],
}
GROUP_CARDS: dict[str, dict[str, Any]] = {
    "PRODUCTS": {"columns": [{"name": "PRODUCT_ID"}, {"name": "CATEGORY"}]},
    "CODE_GROUPS": {"columns": [{"name": "GROUP_NAME"}, {"name": "TITLE"}]},
    "CODES": {"columns": [{"name": "GROUP_NAME"}, {"name": "CODE"}]},
    "SALES": {"columns": [{"name": "PRODUCT_ID"}, {"name": "QTY"}]},
}


def sample(table: str, column: str) -> list[str] | None:
    return GROUPS.get((table, column))


def held(table: str, column: str, values: Sequence[str]) -> set[str] | None:
    return {v for v in values if v in GROUPS.get((table, column), [])}


def test_a_join_whose_columns_share_no_values_is_named_for_an_empty_result() -> None:
    sql = (
        "SELECT P.CATEGORY, COUNT(*) FROM PRODUCTS AS P JOIN CODE_GROUPS AS G ON P.CATEGORY = G.GROUP_NAME "
        "JOIN SALES AS S ON S.PRODUCT_ID = P.PRODUCT_ID GROUP BY P.CATEGORY"
    )
    found = disjoint_joins(parse_one(sql), GROUP_CARDS, sample, held)
    assert [d.line for d in found] == [
        "The join condition P.CATEGORY = G.GROUP_NAME matches no rows: PRODUCTS.CATEGORY holds values such as "
        "'B20', 'E50', 'A10', and CODE_GROUPS.GROUP_NAME values such as 'ORDER_STATUS', 'PRODUCT_CATEGORY'. Join "
        "on columns that hold the same values, or leave that join out."
    ]
    # columns that share values, or a probe that cannot tell, are not named
    shared = "SELECT COUNT(*) FROM PRODUCTS AS P JOIN CODES AS C ON C.CODE = P.CATEGORY"
    assert disjoint_joins(parse_one(shared), GROUP_CARDS, sample, held) == []
    assert disjoint_joins(parse_one(sql), GROUP_CARDS, sample, lambda *_: None) == []
