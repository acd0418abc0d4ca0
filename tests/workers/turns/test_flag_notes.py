"""The answer's line on an active or soft-delete flag the statement filtered on (`workers.turns.flag_notes`)."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.misuse import SOFT_DELETE_WATCH
from workers.turns.flag_notes import flag_notes

CARDS: dict[str, dict[str, Any]] = {
    "CUST_MST": {
        "table": "CUST_MST",
        "columns": [
            {"name": "CUST_ID"},
            {"name": "USE_YN", "watch": f"{SOFT_DELETE_WATCH} (Y, N); current rows need a filter on it"},
            {"name": "GRADE_CD", "watch": ""},
        ],
    }
}


def test_a_flag_filter_the_question_does_not_name_is_said() -> None:
    sql = "SELECT COUNT(*) FROM CUST_MST AS c WHERE c.USE_YN = 'Y'"
    assert flag_notes("How many customers are registered?", sql, "sqlite", CARDS) == [
        "I kept only the rows where CUST_MST.USE_YN = 'Y' (the table's active or deleted flag), which the question "
        "does not name; say if you meant every row."
    ]


@pytest.mark.parametrize(
    ("question", "sql"),
    [
        ("How many active customers are there?", "SELECT COUNT(*) FROM CUST_MST WHERE USE_YN = 'Y'"),
        ("How many customers are in use?", "SELECT COUNT(*) FROM CUST_MST WHERE USE_YN = 'Y'"),
        ("사용 중인 고객은 몇 명인가요?", "SELECT COUNT(*) FROM CUST_MST WHERE USE_YN = 'Y'"),
        ("How many customers are registered?", "SELECT COUNT(*) FROM CUST_MST WHERE GRADE_CD = 'V'"),
        ("How many customers are registered?", "SELECT COUNT(*) FROM CUST_MST"),
        ("How many customers are registered?", "SELECT COUNT(*) FROM CUST_MST WHERE USE_YN IN ('Y', 'N')"),
        ("How many customers are registered?", "SELECT FROM WHERE"),
    ],
)
def test_no_line_where_the_question_names_the_flag_or_none_is_filtered(question: str, sql: str) -> None:
    assert flag_notes(question, sql, "sqlite", CARDS) == []
