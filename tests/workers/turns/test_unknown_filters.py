"""A filter on a column no table of the statement has, left out when the question does not ask for it
(`workers.turns.unknown_filters`)."""

from __future__ import annotations

from typing import Any

import pytest

from workers.turns.unknown_filters import without_unknown_filter

FLAG = "soft-delete/active flag (Y, N); current rows need a filter on it"
CARDS: dict[str, dict[str, Any]] = {
    "ORD_MST": {"columns": [{"name": "ORD_NO"}, {"name": "SHIP_CITY"}, {"name": "ORD_DT"}, {"name": "CUST_ID"}]},
    "CUST_MST": {
        "columns": [
            {"name": "CUST_ID"},
            {"name": "USE_YN", "watch": FLAG},
            {"name": "DEL_FLAG", "watch": FLAG},
            {"name": "STATUS_CODE"},
        ]
    },
}
BUSAN = "How many orders shipped to Busan in 2024?"


@pytest.mark.parametrize(
    ("sql", "column", "left"),
    [
        (
            "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan' AND ORD_DT LIKE '2024%' AND USE_YN = 'Y'",
            "USE_YN",
            "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan' AND ORD_DT LIKE '2024%'",
        ),
        (
            "SELECT COUNT(*) FROM ORD_MST AS o WHERE (o.DEL_FLAG IN ('N', '0')) AND o.SHIP_CITY = 'Busan'",
            "o.DEL_FLAG",
            "SELECT COUNT(*) FROM ORD_MST AS o WHERE o.SHIP_CITY = 'Busan'",
        ),
    ],
)
def test_a_filter_on_a_column_no_table_read_has_is_left_out(sql: str, column: str, left: str) -> None:
    found = without_unknown_filter(sql, "sqlite", column, BUSAN, CARDS)
    assert found is not None
    assert found.sql == left
    assert found.note.startswith("I left out the filter ")


@pytest.mark.parametrize(
    ("sql", "column", "question"),
    [
        (  # the question names the value: asked for, on a column still to be found
            "SELECT COUNT(*) FROM ORD_MST WHERE CARRIER = 'CJ Logistics'",
            "CARRIER",
            "How many orders did CJ Logistics carry?",
        ),
        (  # a table read has it: a qualifier to mend, not a filter to leave out
            "SELECT COUNT(*) FROM ORD_MST AS o JOIN CUST_MST AS c ON c.CUST_ID = o.CUST_ID WHERE o.USE_YN = 'Y'",
            "o.USE_YN",
            BUSAN,
        ),
        ("SELECT USE_YN, COUNT(*) FROM ORD_MST WHERE USE_YN = 'Y' GROUP BY 1", "USE_YN", BUSAN),  # read elsewhere
        ("SELECT COUNT(*) FROM ORD_MST WHERE USE_YN = 'Y' OR SHIP_CITY = 'Busan'", "USE_YN", BUSAN),  # under an OR
        ("SELECT COUNT(*) FROM ORD_MST WHERE USE_YN = SHIP_CITY", "USE_YN", BUSAN),  # no value
        ("SELECT COUNT(*) FROM OTHER WHERE USE_YN = 'Y'", "USE_YN", BUSAN),  # a table no card describes
        (  # no card marks the column as a flag: a filter the model meant, left to the repair
            "SELECT COUNT(*) FROM ORD_MST WHERE STATUS_CODE = '20'",
            "STATUS_CODE",
            "How many orders were paid by credit card?",
        ),
        (  # the question asks for the flag's rows itself
            "SELECT COUNT(*) FROM ORD_MST WHERE USE_YN = 'Y'",
            "USE_YN",
            "How many orders of active customers were shipped to Busan?",
        ),
    ],
)
def test_a_filter_the_question_asks_for_or_that_cannot_go_alone_is_kept(sql: str, column: str, question: str) -> None:
    assert without_unknown_filter(sql, "sqlite", column, question, CARDS) is None
