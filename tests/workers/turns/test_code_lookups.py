"""A code looked up by a guessed name becomes the code the question names (`workers.turns.code_lookups`)."""

from __future__ import annotations

from typing import Any

import pytest

from workers.turns.code_lookups import codes_looked_up

CARRIERS = [
    {"code": "CJ", "meaning": "CJ Logistics"},
    {"code": "LT", "meaning": "Lotte Global Logistics"},
    {"code": "KP", "meaning": "Korea Post"},
]
DEPARTMENTS = [
    {"code": "D10", "meaning": "Sales Team 1"},
    {"code": "D11", "meaning": "Sales Team 2"},
    {"code": "D50", "meaning": "IT"},
]
CARDS: dict[str, dict[str, Any]] = {
    "SHIP_HIST": {"columns": [{"name": "SHIP_SEQ"}, {"name": "CARRIER_CD", "codes": CARRIERS}]},
    "EMP_MST": {"columns": [{"name": "EMP_NO"}, {"name": "DEPT_CD", "codes": DEPARTMENTS}, {"name": "NOTE"}]},
    "CODE_MST": {"columns": [{"name": "CODE_GRP"}, {"name": "GRP_NM"}]},
    "CODE_DTL": {"columns": [{"name": "CODE_CD"}, {"name": "CODE_NM"}]},
    "ORD_MST": {
        "columns": [
            {"name": "ORD_NO"},
            {
                "name": "STATUS_CODE",
                "codes": [{"code": "40", "meaning": "Delivered"}, {"code": "90", "meaning": "Cancelled"}],
            },
        ]
    },
}


@pytest.mark.parametrize(
    ("question", "sql", "fixed"),
    [
        (
            "How many employees work in the IT department?",
            "SELECT COUNT(EMP_NO) FROM EMP_MST WHERE DEPT_CD = (SELECT CODE_GRP FROM CODE_MST WHERE GRP_NM = 'IT')",
            "SELECT COUNT(EMP_NO) FROM EMP_MST WHERE DEPT_CD = 'D50'",
        ),
        (  # the code the lookup stands for is already compared: once is enough
            "How many shipments did CJ Logistics carry?",
            "SELECT COUNT(*) FROM SHIP_HIST WHERE CARRIER_CD = 'CJ' AND CARRIER_CD IN "
            "(SELECT CODE_CD FROM CODE_DTL WHERE CODE_NM = 'Logistics')",
            "SELECT COUNT(*) FROM SHIP_HIST WHERE CARRIER_CD = 'CJ'",
        ),
        (
            "How many shipments did CJ Logistics carry?",
            "SELECT COUNT(*) FROM SHIP_HIST AS s WHERE s.CARRIER_CD IN "
            "(SELECT CODE_CD FROM CODE_DTL WHERE CODE_NM LIKE '%Logistics%')",
            "SELECT COUNT(*) FROM SHIP_HIST AS s WHERE s.CARRIER_CD = 'CJ'",
        ),
    ],
)
def test_a_lookup_by_part_of_the_named_meaning_is_the_named_code(question: str, sql: str, fixed: str) -> None:
    assert codes_looked_up(sql, "sqlite", question, CARDS) == fixed


@pytest.mark.parametrize(
    ("sql", "fixed"),
    [
        (
            "SELECT COUNT(*) FROM ORD_MST WHERE STATUS_CODE = '90' AND CODE_NM = 'Cancelled'",
            "SELECT COUNT(*) FROM ORD_MST WHERE STATUS_CODE = '90'",
        ),
        (
            "SELECT COUNT(*) FROM ORD_MST AS o WHERE CODE_DTL.CODE_NM = 'cancelled'",
            "SELECT COUNT(*) FROM ORD_MST AS o WHERE STATUS_CODE = '90'",
        ),
        (  # the code table is read: its name column is there to compare
            "SELECT COUNT(*) FROM ORD_MST AS o JOIN CODE_DTL AS d ON d.CODE_CD = o.STATUS_CODE "
            "WHERE d.CODE_NM = 'Cancelled'",
            None,
        ),
        ("SELECT COUNT(*) FROM ORD_MST WHERE CODE_NM = 'Returned'", None),  # no code means it
    ],
)
def test_a_code_name_compared_where_no_table_has_it_is_the_code(sql: str, fixed: str | None) -> None:
    assert codes_looked_up(sql, "sqlite", "How many orders were cancelled?", CARDS) == (fixed or sql)


@pytest.mark.parametrize(
    ("question", "sql"),
    [
        (  # the lookup's literal is no word of the meaning the question names
            "How many employees work in the IT department?",
            "SELECT COUNT(*) FROM EMP_MST WHERE DEPT_CD IN (SELECT CODE_GRP FROM CODE_MST WHERE GRP_NM = 'Sales')",
        ),
        (  # the question names two meanings alike
            "How many employees work in the sales team?",
            "SELECT COUNT(*) FROM EMP_MST WHERE DEPT_CD IN (SELECT CODE_GRP FROM CODE_MST WHERE GRP_NM = 'Sales')",
        ),
        (  # a subquery that compares no literal is a question of its own
            "How many employees work in the IT department?",
            "SELECT COUNT(*) FROM EMP_MST WHERE DEPT_CD IN (SELECT DEPT_CD FROM EMP_MST GROUP BY DEPT_CD)",
        ),
        (  # a column without code meanings
            "How many employees have an IT note?",
            "SELECT COUNT(*) FROM EMP_MST WHERE NOTE IN (SELECT CODE_NM FROM CODE_DTL WHERE CODE_NM = 'IT')",
        ),
        (  # the question names part of a meaning only
            "How many shipments did a logistics company carry?",
            "SELECT COUNT(*) FROM SHIP_HIST WHERE CARRIER_CD IN "
            "(SELECT CODE_CD FROM CODE_DTL WHERE CODE_NM = 'Logistics')",
        ),
    ],
)
def test_anything_uncertain_is_left_as_written(question: str, sql: str) -> None:
    assert codes_looked_up(sql, "sqlite", question, CARDS) == sql
