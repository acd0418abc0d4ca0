"""The one value formatter (`core.answer.values`) and the result kinds the turn engine derives from cards
(`workers.sql.result_kinds`)."""

from __future__ import annotations

from typing import Any

import pytest

from core.answer.model import Answer, ResultTable
from core.answer.values import NULL_TEXT, ValueKind, format_value, infer_kind
from workers.sql.result_kinds import result_kinds

K = ValueKind


@pytest.mark.parametrize(
    ("value", "kind", "shown"),
    [
        (10234, K.IDENTIFIER, "10234"),
        (2024, K.YEAR, "2024"),
        (2024.0, K.YEAR, "2024"),
        ("00042", K.CODE, "00042"),
        (4750, K.COUNT, "4,750"),
        ("4750", K.COUNT, "4,750"),
        (3691987750.5, K.AMOUNT, "3,691,987,750.50"),
        (12, K.AMOUNT, "12.00"),
        (1234.5678, K.NUMBER, "1,234.57"),
        (0.03125, K.NUMBER, "0.03125"),
        (2.0, K.NUMBER, "2"),
        (float("nan"), K.NUMBER, "nan"),
        (None, K.COUNT, NULL_TEXT),
        (True, K.BOOLEAN, "yes"),
        (False, K.TEXT, "no"),
        ("2024-03-01", K.DATE, "2024-03-01"),
        ("2024-03-01T00:00:00", K.DATE, "2024-03-01"),
        ("2024-03-01T09:30:00", K.DATE, "2024-03-01 09:30"),
        ("2024-03-01T09:30:15.25", K.DATE, "2024-03-01 09:30:15"),
        ("Busan", K.TEXT, "Busan"),
        ("n/a", K.COUNT, "n/a"),
    ],
)
def test_a_cell_reads_as_its_column_kind_says(value: Any, kind: ValueKind, shown: str) -> None:
    assert format_value(value, kind) == shown


@pytest.mark.parametrize(
    ("column", "values", "kind"),
    [
        ("ORD_ID", [10234, 10235], K.IDENTIFIER),
        ("customerId", [7], K.IDENTIFIER),
        ("CUST_NO", ["C001"], K.IDENTIFIER),
        ("order_year", [2023, 2024], K.YEAR),
        ("PAID", [1.5, 2.5], K.NUMBER),  # ends in "id" but names no identifier
        ("COUNT(*)", [4750], K.COUNT),
        ("total", [1.5, None], K.NUMBER),
        ("shipped", ["2024-01-05", None], K.DATE),
        ("active", [True, False], K.BOOLEAN),
        ("city", ["Busan"], K.TEXT),
        ("empty", [], K.TEXT),
    ],
)
def test_without_a_card_the_kind_is_guessed_from_name_and_values(
    column: str, values: list[Any], kind: ValueKind
) -> None:
    assert infer_kind(column, values) is kind


CARDS: dict[str, dict[str, dict[str, Any]]] = {
    "ORD_MST": {
        "ORD_ID": {"name": "ORD_ID", "family": "integer", "key": "PK"},
        "CUST_NO": {"name": "CUST_NO", "family": "integer", "key": "FK"},
        "ORD_DT": {"name": "ORD_DT", "family": "date"},
        "TOT_AMT": {"name": "TOT_AMT", "family": "decimal", "type": "DECIMAL(12,2)"},
        "QTY": {"name": "QTY", "family": "integer"},
        "STAT_CD": {"name": "STAT_CD", "family": "text", "codes": {"S": "shipped"}},
    },
    "CUST_MST": {"CUST_NO": {"name": "CUST_NO", "family": "integer", "key": "PK"}},
}


@pytest.mark.parametrize(
    ("sql", "dialect", "kinds"),
    [
        ("SELECT o.ORD_ID, o.STAT_CD, o.ORD_DT FROM ORD_MST o", "sqlite", [K.IDENTIFIER, K.CODE, K.DATE]),
        ("SELECT COUNT(*) AS n, SUM(TOT_AMT) AS total, AVG(QTY) FROM ORD_MST", "sqlite", [K.COUNT, K.AMOUNT, K.NUMBER]),
        ("SELECT strftime('%Y', ORD_DT) AS y, COUNT(*) FROM ORD_MST GROUP BY 1", "sqlite", [K.YEAR, K.COUNT]),
        ("SELECT EXTRACT(YEAR FROM ORD_DT), MAX(ORD_DT) FROM ORD_MST GROUP BY 1", "mysql", [K.YEAR, K.DATE]),
        ("SELECT YEAR(ORD_DT), ROUND(SUM(TOT_AMT) / 2, 2) FROM ORD_MST GROUP BY 1", "mysql", [K.YEAR, K.AMOUNT]),
        (
            "SELECT c.CUST_NO, COUNT(*) FROM CUST_MST c JOIN ORD_MST o ON o.CUST_NO = c.CUST_NO GROUP BY 1",
            "sqlite",
            [K.IDENTIFIER, K.COUNT],
        ),
        ("SELECT 1, 'x' FROM ORD_MST", "sqlite", [None, None]),
        ("this is not sql", "sqlite", [None, None]),
    ],
)
def test_result_kinds_come_from_the_cards_of_the_columns_read(
    sql: str, dialect: str, kinds: list[ValueKind | None]
) -> None:
    assert result_kinds(sql, dialect, ["a"] * len(kinds), CARDS) == kinds


def test_a_star_is_matched_by_the_result_column_names() -> None:
    kinds = result_kinds("SELECT * FROM ORD_MST", "sqlite", ["ORD_ID", "TOT_AMT", "NOTE"], CARDS)
    assert kinds == [K.IDENTIFIER, K.AMOUNT, None]


def test_an_answer_survives_the_store_and_older_payloads_still_read() -> None:
    table = ResultTable(database="erp", sql="SELECT 1", columns=["n"], kinds=[K.COUNT], rows=[[4750]])
    answer = Answer(status="answered", text="4,750 orders.", results=[table], warnings=["a copy"])
    again = Answer.from_stored(answer.to_json())
    assert again == answer
    assert set(answer.to_json()) >= {"status", "answer", "rounds", "tables_used", "sql"}
    older = Answer.from_stored({"status": "answered", "answer": "x", "sql": [{"database": "erp", "rows": [[1]]}]})
    assert older.results[0].kinds == []
    assert older.results[0].rows == [[1]]
    assert Answer.from_stored("garbage").status == "failed"
    assert Answer.from_stored({"status": "running", "answer": "x"}).status == "failed"
