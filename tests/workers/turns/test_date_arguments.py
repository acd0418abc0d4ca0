"""A date function given a column no table of the statement has, read from the one column holding dates
(`workers.turns.date_arguments`)."""

from __future__ import annotations

from typing import Any

import pytest

from workers.turns.date_arguments import dated_argument

SALES: dict[str, Any] = {
    "columns": [
        {"name": "SALES_YM", "type": "CHAR(6)", "values": ["202401", "202402", "202403"]},
        {"name": "PRD_CD", "type": "VARCHAR(10)", "values": ["P0001"]},
        {"name": "AMT", "type": "NUMERIC"},
    ]
}
ORDERS: dict[str, Any] = {
    "columns": [{"name": "ORD_NO"}, {"name": "ORD_DT", "type": "DATE"}, {"name": "TOT_AMT", "type": "NUMERIC"}]
}
PRODUCTS: dict[str, Any] = {"columns": [{"name": "PRD_CD"}, {"name": "PRD_NM", "type": "VARCHAR(80)"}]}


@pytest.mark.parametrize(
    ("sql", "column", "cards", "fixed"),
    [
        (
            "SELECT strftime('%Y-%m', d) AS month, SUM(AMT) FROM SALES_2024 GROUP BY month",
            "d",
            {"SALES_2024": SALES},
            "SELECT STRFTIME('%Y-%m', SALES_YM) AS month, SUM(AMT) FROM SALES_2024 GROUP BY month",
        ),
        (  # two tables read: the date column's table named; the argument's own qualifier replaced
            "SELECT P.PRD_NM, strftime('%Y', O.order_date) FROM ORD_MST AS O JOIN PRD_MST AS P ON P.PRD_CD = O.ORD_NO",
            "O.order_date",
            {"ORD_MST": ORDERS, "PRD_MST": PRODUCTS},
            "SELECT P.PRD_NM, STRFTIME('%Y', O.ORD_DT) FROM ORD_MST AS O JOIN PRD_MST AS P ON P.PRD_CD = O.ORD_NO",
        ),
    ],
)
def test_the_one_date_column_of_the_tables_read_stands_for_an_unknown_argument(
    sql: str, column: str, cards: dict[str, Any], fixed: str
) -> None:
    found = dated_argument(sql, "sqlite", column, cards)
    assert found is not None
    assert found.sql == fixed
    assert found.note.startswith("I read the dates from ")


@pytest.mark.parametrize(
    ("sql", "column", "cards"),
    [
        (  # two date columns: no sure reading
            "SELECT strftime('%Y', d) FROM ORD_MST",
            "d",
            {"ORD_MST": {"columns": [*ORDERS["columns"], {"name": "REG_DTM", "type": "DATETIME"}]}},
        ),
        ("SELECT strftime('%Y', d) FROM PRD_MST", "d", {"PRD_MST": PRODUCTS}),  # no date column at all
        ("SELECT SUM(AMT) FROM SALES_2024 WHERE region = 'N'", "region", {"SALES_2024": SALES}),  # not a date's
        ("SELECT strftime('%Y', d) FROM SALES_2024 JOIN OTHER ON 1 = 1", "d", {"SALES_2024": SALES}),  # unknown table
        ("SELECT strftime('%Y', AMT) FROM SALES_2024", "AMT", {"SALES_2024": SALES}),  # the table has it
        (  # one table read twice: which of its rows the date is of is not sure
            "SELECT strftime('%Y', d) FROM SALES_2024 AS a JOIN SALES_2024 AS b ON a.PRD_CD = b.PRD_CD",
            "d",
            {"SALES_2024": SALES},
        ),
    ],
)
def test_anything_less_than_one_sure_date_column_is_left_to_the_repair(
    sql: str, column: str, cards: dict[str, Any]
) -> None:
    assert dated_argument(sql, "sqlite", column, cards) is None
