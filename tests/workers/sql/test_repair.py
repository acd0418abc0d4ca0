"""Rewriting what the source's engine lacks before the guard: the database name as a qualifier, and on SQLite the
MySQL/PostgreSQL date-part functions. Each rewrite is run on a real SQLite database to show it means what was meant."""

from __future__ import annotations

import sqlite3

import pytest

from workers.sql.guard import check_query
from workers.sql.repair import repair

ORDERS = [("A1", "2023-12-31"), ("A2", "2024-01-01"), ("A3", "2024-06-30 21:37:47"), ("A4", "2022-03-05")]


@pytest.fixture
def orders() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE ORD_MST (ORD_NO TEXT, ORD_DT TEXT)")
    connection.executemany("INSERT INTO ORD_MST VALUES (?, ?)", ORDERS)
    return connection


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("SELECT COUNT(*) FROM ORD_MST WHERE YEAR(ORD_DT) = 2024", 2),
        ("SELECT COUNT(*) FROM ORD_MST WHERE EXTRACT(YEAR FROM ORD_DT) = 2024", 2),
        ("SELECT COUNT(*) FROM ORD_MST WHERE MONTH(ORD_DT) = 1 AND DAY(ORD_DT) = 1", 1),
        ("SELECT COUNT(*) FROM ORD_MST WHERE EXTRACT(MONTH FROM ORD_DT) = 6", 1),
        ("SELECT COUNT(*) FROM ORD_MST WHERE DATE_FORMAT(ORD_DT, '%Y-%m') = '2024-06'", 1),
        ("SELECT COUNT(*) FROM erp.ORD_MST AS o WHERE YEAR(o.ORD_DT) < 2024", 2),
        ("SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT < NOW() AND ORD_DT < CURDATE()", 4),
    ],
)
def test_sqlite_rewrites_run_with_the_meaning_written(orders: sqlite3.Connection, written: str, expected: int) -> None:
    with pytest.raises(sqlite3.OperationalError):
        orders.execute(written)  # as the model wrote it, SQLite cannot run it
    repaired = repair(written, "sqlite", ["erp"])
    assert repaired is not None
    assert repaired.changes
    check_query(repaired.sql, "sqlite")  # the guard lets the rewritten statement through
    assert orders.execute(repaired.sql).fetchone()[0] == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("SELECT COUNT(*) FROM ORD_MST WHERE STRFTIME('%Y', ORD_DT) = 2024", 2),
        ("SELECT COUNT(*) FROM ORD_MST WHERE strftime('%m', ORD_DT) IN (1, 6)", 2),
        ("SELECT COUNT(*) FROM ORD_MST WHERE STRFTIME('%Y', ORD_DT) BETWEEN 2022 AND 2023", 2),
        ("SELECT COUNT(*) FROM ORD_MST WHERE 2023 <= STRFTIME('%Y', ORD_DT)", 3),
    ],
)
def test_strftime_compared_with_a_number_is_compared_as_a_number(
    orders: sqlite3.Connection, written: str, expected: int
) -> None:
    assert orders.execute(written).fetchone()[0] in (0, 4)  # as written, text against integers: all or nothing
    repaired = repair(written, "sqlite")
    assert repaired is not None
    assert repaired.changes == ("SQLite's STRFTIME() gives text; compared it as a number with CAST(… AS INTEGER)",)
    assert orders.execute(repaired.sql).fetchone()[0] == expected


def test_what_each_rewrite_changed_is_said() -> None:
    repaired = repair("SELECT COUNT(*) FROM erp.ORD_MST WHERE YEAR(ORD_DT) = 2024", "sqlite", ["erp", "orders"])
    assert repaired is not None
    assert repaired.sql == "SELECT COUNT(*) FROM ORD_MST WHERE CAST(STRFTIME('%Y', ORD_DT) AS INTEGER) = 2024"
    assert repaired.changes == (
        "dropped the database name erp before table names",
        "SQLite has no YEAR(); used STRFTIME('%Y', …)",
    )


@pytest.mark.parametrize(
    ("sql", "dialect", "names"),
    [
        ("SELECT COUNT(*) FROM ORD_MST WHERE STRFTIME('%Y', ORD_DT) = '2024'", "sqlite", ["erp"]),
        ("SELECT YEAR(ORD_DT) FROM ORD_MST", "mysql", ["erp"]),  # MariaDB has YEAR()
        ("SELECT EXTRACT(YEAR FROM ORD_DT) FROM ORD_MST", "postgres", ["erp"]),
        ("SELECT COUNT(*) FROM sales.ORD_MST", "postgres", ["erp"]),  # another qualifier: a real schema
        ("SELECT COUNT(*) FROM erp.ORD_MST", "sqlite", []),  # the name is a schema of the source: kept
        ("SELECT DATE_FORMAT(ORD_DT, '%M %Y') FROM ORD_MST", "sqlite", []),  # %M: month name, no sure equivalent
        ("SELECT * FROM (", "sqlite", ["erp"]),  # does not parse: the guard reports it
        ("SELECT 1; SELECT 2", "sqlite", ["erp"]),
    ],
)
def test_nothing_is_rewritten_without_a_sure_reading(sql: str, dialect: str, names: list[str]) -> None:
    assert repair(sql, dialect, names) is None


def test_the_database_name_is_dropped_on_every_engine() -> None:
    for dialect in ("mysql", "postgres"):
        repaired = repair("SELECT COUNT(*) FROM ERP.ORD_MST JOIN erp.CUST_MST USING (CUST_ID)", dialect, ["erp"])
        assert repaired is not None
        assert "erp." not in repaired.sql.lower()
        assert repaired.changes == ("dropped the database name erp before table names",)


@pytest.mark.parametrize(
    ("sql", "fixed"),
    [
        (  # a space for the underscore: the statement does not parse
            "SELECT CUST_ID, COUNT(*) AS ORDER_COUNT FROM ORD_MST GROUP BY CUST_ID ORDER BY ORDER COUNT DESC LIMIT 1",
            "SELECT CUST_ID, COUNT(*) AS ORDER_COUNT FROM ORD_MST GROUP BY CUST_ID ORDER BY ORDER_COUNT DESC LIMIT 1",
        ),
        (  # a hyphen: two columns subtracted that the alias names
            "SELECT PRD_CD, SUM(QTY) AS Total_Qty FROM ORD_DTL_H GROUP BY PRD_CD ORDER BY TOTAL-Qty DESC LIMIT 1",
            "SELECT PRD_CD, SUM(QTY) AS Total_Qty FROM ORD_DTL_H GROUP BY PRD_CD ORDER BY Total_Qty DESC LIMIT 1",
        ),
        (  # the literal keeps its words; the alias outside it is put back
            "SELECT COUNT(*) AS order_count FROM t WHERE note = 'order count' ORDER BY order  count",
            "SELECT COUNT(*) AS order_count FROM t WHERE note = 'order count' ORDER BY order_count",
        ),
    ],
)
def test_an_alias_written_again_with_a_space_or_hyphen_is_the_alias(sql: str, fixed: str) -> None:
    repaired = repair(sql, "sqlite")
    assert repaired is not None
    assert repaired.sql == fixed


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a - b AS a_c FROM t",  # a real subtraction: no alias a_b
        "SELECT total - qty AS net FROM t ORDER BY net",
        "SELECT x AS total_qty, total - qty AS rest FROM t",  # a subtraction in the select list stays one
        "SELECT x AS a_b FROM t WHERE name = 'a b'",  # parses: the literal is never touched
    ],
)
def test_a_subtraction_or_words_that_are_no_alias_stay(sql: str) -> None:
    assert repair(sql, "sqlite") is None
