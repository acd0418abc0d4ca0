"""Joins that multiply what a statement adds up are taken out (`workers.turns.join_pruning`); every other statement
runs as written. The statements run on a real SQLite database, so each case shows what the rule does to the rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from workers.turns.join_pruning import Shown, without_unneeded_joins

TABLES = {
    "ORD_MST": Shown(frozenset({"ord_no", "cust_id", "ord_dt", "tot_amt"}), frozenset({"ord_no"})),
    "ORD_DTL": Shown(frozenset({"ord_no", "line_no", "prd_cd", "qty"}), frozenset({"ord_no", "line_no"})),
    "STK_INV": Shown(frozenset({"wh_cd", "prd_cd", "qty"}), frozenset({"wh_cd", "prd_cd"})),
    "CUST_MST": Shown(frozenset({"cust_id", "cust_nm"}), frozenset({"cust_id"})),
    "SHIPMENTS": Shown(frozenset({"ship_no", "ord_no", "carrier"}), frozenset({"ship_no"})),
}


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.executescript(
        """
        CREATE TABLE CUST_MST (CUST_ID TEXT PRIMARY KEY, CUST_NM TEXT);
        CREATE TABLE ORD_MST (ORD_NO TEXT PRIMARY KEY, CUST_ID TEXT, ORD_DT TEXT, TOT_AMT INTEGER);
        CREATE TABLE ORD_DTL (ORD_NO TEXT, LINE_NO INTEGER, PRD_CD TEXT, QTY INTEGER, PRIMARY KEY (ORD_NO, LINE_NO));
        CREATE TABLE STK_INV (WH_CD TEXT, PRD_CD TEXT, QTY INTEGER, PRIMARY KEY (WH_CD, PRD_CD));
        INSERT INTO CUST_MST VALUES ('C1', 'Kim'), ('C2', 'Lee');
        INSERT INTO ORD_MST VALUES ('O1', 'C1', '2023-03-01', 100), ('O2', 'C2', '2023-05-01', 50),
                                   ('O3', 'C1', '2024-01-02', 70);
        INSERT INTO ORD_DTL VALUES ('O1', 1, 'P1', 2), ('O1', 2, 'P2', 1), ('O1', 3, 'P1', 4), ('O2', 1, 'P2', 5),
                                   ('O3', 1, 'P1', 1);
        INSERT INTO STK_INV VALUES ('W1', 'P1', 10), ('W2', 'P1', 3), ('W1', 'P2', 8);
        """
    )
    yield connection
    connection.close()


def rows(db: sqlite3.Connection, sql: str) -> list[tuple[object, ...]]:
    return sorted(db.execute(sql).fetchall(), key=repr)


def pruned(sql: str, question: str) -> str:
    return without_unneeded_joins(sql, "sqlite", question, TABLES)


def test_a_header_total_joined_to_its_lines_is_summed_once_per_order(db: sqlite3.Connection) -> None:
    written = (
        "SELECT SUM(T1.TOT_AMT) FROM ORD_MST AS T1 JOIN ORD_DTL AS T2 ON T1.ORD_NO = T2.ORD_NO "
        "WHERE T1.ORD_DT LIKE '2023%'"
    )
    ran = pruned(written, "What was the total order amount in 2023?")
    assert "ORD_DTL" not in ran
    assert rows(db, written) == [(350,)]  # order O1 counted once per line
    assert rows(db, ran) == rows(db, "SELECT SUM(TOT_AMT) FROM ORD_MST WHERE ORD_DT LIKE '2023%'") == [(150,)]


def test_a_column_the_join_equates_is_read_from_the_table_that_stays(db: sqlite3.Connection) -> None:
    written = (
        "SELECT T1.PRD_CD, SUM(T2.QTY) AS sold FROM STK_INV AS T1 JOIN ORD_DTL AS T2 ON T1.PRD_CD = T2.PRD_CD "
        "GROUP BY T1.PRD_CD ORDER BY sold DESC LIMIT 1"
    )
    ran = pruned(written, "Which product sold the largest total quantity?")
    assert "STK_INV" not in ran
    assert rows(db, written) == [("P1", 14)]  # each sale counted once per warehouse that stocks it
    assert rows(db, ran) == [("P1", 7)]


def test_a_join_the_question_asks_for_stays() -> None:
    written = "SELECT SUM(T1.TOT_AMT) FROM ORD_MST AS T1 JOIN SHIPMENTS AS T2 ON T1.ORD_NO = T2.ORD_NO"
    assert pruned(written, "What is the total amount of orders that have a shipment?") == written
    assert "SHIPMENTS" not in pruned(written, "What is the total amount of all orders?")


def test_statements_that_count_rows_or_add_up_nothing_run_as_written() -> None:
    lines_2024 = "SELECT COUNT(*) FROM ORD_MST T1 JOIN ORD_DTL T2 ON T1.ORD_NO = T2.ORD_NO WHERE T1.ORD_DT LIKE '2024%'"
    names = "SELECT DISTINCT T1.CUST_NM FROM CUST_MST T1 JOIN ORD_MST T2 ON T1.CUST_ID = T2.CUST_ID"
    mixed = "SELECT COUNT(*), SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN ORD_DTL T2 ON T1.ORD_NO = T2.ORD_NO"
    for sql in (lines_2024, names, mixed):
        assert pruned(sql, "How many order lines and names?") == sql


def test_a_join_that_matches_one_row_or_is_read_elsewhere_stays() -> None:
    one_row = "SELECT SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN CUST_MST T2 ON T1.CUST_ID = T2.CUST_ID"
    filtered = "SELECT SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN ORD_DTL T2 ON T1.ORD_NO = T2.ORD_NO WHERE T2.QTY > 3"
    unqualified = "SELECT SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN ORD_DTL T2 ON T1.ORD_NO = T2.ORD_NO WHERE QTY > 3"
    nested = (
        "SELECT SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN ORD_DTL T2 ON T1.ORD_NO = T2.ORD_NO"
        " WHERE EXISTS (SELECT 1 FROM STK_INV S WHERE S.PRD_CD = T2.PRD_CD)"
    )
    star = "SELECT *, SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN ORD_DTL T2 ON T1.ORD_NO = T2.ORD_NO"
    for sql in (one_row, filtered, unqualified, nested, star):
        assert pruned(sql, "What is the total amount?") == sql


def test_set_operations_unknown_tables_and_unreadable_sql_run_as_written() -> None:
    union = (
        "SELECT SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN ORD_DTL T2 ON T1.ORD_NO = T2.ORD_NO"
        " UNION SELECT SUM(TOT_AMT) FROM ORD_MST"
    )
    unknown = "SELECT SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN RET_DTL T2 ON T1.ORD_NO = T2.ORD_NO"
    for sql in (union, unknown, "SELEC SUM(", ""):
        assert pruned(sql, "What is the total amount?") == sql
