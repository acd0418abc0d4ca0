"""Joins that multiply or filter a statement's rows where the question does not ask for them are taken out
(`workers.turns.join_pruning`); every other statement runs as written. The statements run on a real SQLite
database, so each case shows what the rule does to the rows."""

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
        INSERT INTO CUST_MST VALUES ('C1', 'Kim'), ('C2', 'Lee'), ('C3', 'Park');
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


@pytest.mark.parametrize(
    ("written", "question", "left_out", "as_written", "pruned_rows"),
    [
        # order O1 counted once per line
        (
            "SELECT SUM(T1.TOT_AMT) FROM ORD_MST AS T1 JOIN ORD_DTL AS T2 ON T1.ORD_NO = T2.ORD_NO "
            "WHERE T1.ORD_DT LIKE '2023%'",
            "What was the total order amount in 2023?",
            "ORD_DTL",
            [(350,)],
            [(150,)],
        ),
        # each sale counted once per warehouse that stocks it; the product read from the table that stays
        (
            "SELECT T1.PRD_CD, SUM(T2.QTY) AS sold FROM STK_INV AS T1 JOIN ORD_DTL AS T2 ON T1.PRD_CD = T2.PRD_CD "
            "GROUP BY T1.PRD_CD ORDER BY sold DESC LIMIT 1",
            "Which product sold the largest total quantity?",
            "STK_INV",
            [("P1", 14)],
            [("P1", 7)],
        ),
        # a listing repeated once per order
        (
            "SELECT T1.CUST_NM FROM CUST_MST AS T1 JOIN ORD_MST AS T2 ON T1.CUST_ID = T2.CUST_ID "
            "WHERE T1.CUST_ID = 'C1'",
            "What is the name of customer C1?",
            "ORD_MST",
            [("Kim",), ("Kim",)],
            [("Kim",)],
        ),
        # a count of customers limited to those who ordered
        (
            "SELECT COUNT(DISTINCT T1.CUST_ID) FROM CUST_MST AS T1 JOIN ORD_MST AS T2 ON T1.CUST_ID = T2.CUST_ID",
            "How many customers are there?",
            "ORD_MST",
            [(2,)],
            [(3,)],
        ),
        # two orders, counted once per line: four
        (
            "SELECT T1.CUST_ID FROM ORD_MST AS T1 JOIN ORD_DTL AS T2 ON T1.ORD_NO = T2.ORD_NO "
            "GROUP BY T1.CUST_ID HAVING COUNT(T1.ORD_NO) > 2",
            "Which customers placed more than two orders?",
            "ORD_DTL",
            [("C1",)],
            [],
        ),
    ],
    ids=[
        "header-total-over-lines",
        "sold-over-stock",
        "listing-over-orders",
        "customers-who-ordered",
        "count-of-other",
    ],
)
def test_a_join_that_multiplies_or_filters_rows_unasked_is_left_out(
    db: sqlite3.Connection,
    written: str,
    question: str,
    left_out: str,
    as_written: list[tuple[object, ...]],
    pruned_rows: list[tuple[object, ...]],
) -> None:
    ran = pruned(written, question)
    assert left_out not in ran
    assert rows(db, written) == as_written
    assert rows(db, ran) == pruned_rows


def test_a_header_total_left_alone_is_the_orders_own_total(db: sqlite3.Connection) -> None:
    written = (
        "SELECT SUM(T1.TOT_AMT) FROM ORD_MST AS T1 JOIN ORD_DTL AS T2 ON T1.ORD_NO = T2.ORD_NO "
        "WHERE T1.ORD_DT LIKE '2023%'"
    )
    ran = pruned(written, "What was the total order amount in 2023?")
    assert rows(db, ran) == rows(db, "SELECT SUM(TOT_AMT) FROM ORD_MST WHERE ORD_DT LIKE '2023%'")


def test_a_join_the_question_asks_for_stays() -> None:
    written = "SELECT SUM(T1.TOT_AMT) FROM ORD_MST AS T1 JOIN SHIPMENTS AS T2 ON T1.ORD_NO = T2.ORD_NO"
    assert pruned(written, "What is the total amount of orders that have a shipment?") == written
    assert "SHIPMENTS" not in pruned(written, "What is the total amount of all orders?")
    customers = "SELECT COUNT(DISTINCT T1.CUST_ID) FROM CUST_MST AS T1 JOIN ORD_MST AS T2 ON T1.CUST_ID = T2.CUST_ID"
    assert pruned(customers, "How many customers have placed orders?") == customers  # ORD_MST says "order"


ORDERS_AND_LINES = "FROM ORD_MST T1 JOIN ORD_DTL T2 ON T1.ORD_NO = T2.ORD_NO"
TOTAL = "What is the total amount?"


@pytest.mark.parametrize(
    ("sql", "question"),
    [
        # a statement that counts the joined table's rows (the lines may be what it counts)
        (f"SELECT COUNT(*) {ORDERS_AND_LINES} WHERE T1.ORD_DT LIKE '2024%'", "How many in 2024?"),
        (f"SELECT T1.CUST_ID, COUNT(T2.LINE_NO) {ORDERS_AND_LINES} GROUP BY T1.CUST_ID", "How many per customer?"),
        (f"SELECT T1.CUST_ID, COUNT(LINE_NO) {ORDERS_AND_LINES} GROUP BY T1.CUST_ID", "How many per customer?"),
        (f"SELECT COUNT(*), SUM(T1.TOT_AMT) {ORDERS_AND_LINES}", "How many and what total?"),
        # a join that matches one row at most, or whose table the statement reads elsewhere
        ("SELECT SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN CUST_MST T2 ON T1.CUST_ID = T2.CUST_ID", TOTAL),
        (f"SELECT SUM(T1.TOT_AMT) {ORDERS_AND_LINES} WHERE T2.QTY > 3", TOTAL),
        (f"SELECT SUM(T1.TOT_AMT) {ORDERS_AND_LINES} WHERE QTY > 3", TOTAL),
        (
            f"SELECT SUM(T1.TOT_AMT) {ORDERS_AND_LINES}"
            " WHERE EXISTS (SELECT 1 FROM STK_INV S WHERE S.PRD_CD = T2.PRD_CD)",
            TOTAL,
        ),
        (f"SELECT *, SUM(T1.TOT_AMT) {ORDERS_AND_LINES}", TOTAL),
        # set operations, tables the model was not shown, statements that do not parse
        (f"SELECT SUM(T1.TOT_AMT) {ORDERS_AND_LINES} UNION SELECT SUM(TOT_AMT) FROM ORD_MST", TOTAL),
        ("SELECT SUM(T1.TOT_AMT) FROM ORD_MST T1 JOIN RET_DTL T2 ON T1.ORD_NO = T2.ORD_NO", TOTAL),
        ("SELEC SUM(", TOTAL),
        ("", TOTAL),
    ],
    ids=[
        "count-star",
        "count-of-its-column",
        "count-of-a-bare-column",
        "count-and-sum",
        "to-one",
        "filtered-by-it",
        "unqualified-column-of-it",
        "read-in-a-subquery",
        "star",
        "union",
        "unknown-table",
        "unparsable",
        "empty",
    ],
)
def test_other_statements_run_as_written(sql: str, question: str) -> None:
    assert pruned(sql, question) == sql
