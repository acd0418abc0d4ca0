"""What the local-model benchmark (bench.local_model_accuracy) asks and how an answer is judged: the thirty sample
ERP questions with their reference SQL, a fixed-hash subset of Spider dev with its gold SQL, the items a system is
measured on, and the record of one attempt.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from bench.bench_data import GOLD, SPIDER

ROW_CAP = 200
SQL_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Question:
    id: int
    text: str
    database: str
    reference: str
    match: str = "all"  # "all": every value of the expected row; "any": one of them (a name or its code)


Y2023 = "ORD_DT >= '2023-01-01' AND ORD_DT < '2024-01-01'"
Y2024 = "ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01'"
QUESTIONS = [
    Question(1, "How many orders were placed in 2024?", "erp", f"SELECT COUNT(*) FROM ORD_MST WHERE {Y2024}"),
    Question(2, "How many customers are registered?", "erp", "SELECT COUNT(*) FROM CUST_MST"),
    Question(3, "How many products are there?", "erp", "SELECT COUNT(*) FROM PRD_MST"),
    Question(4, "What was the total order amount in 2023?", "erp", f"SELECT SUM(TOT_AMT) FROM ORD_MST WHERE {Y2023}"),
    Question(5, "How many orders were cancelled?", "erp", "SELECT COUNT(*) FROM ORD_MST WHERE STATUS_CODE = '90'"),
    Question(
        6,
        "How many orders placed in 2023 have been delivered?",
        "erp",
        f"SELECT COUNT(*) FROM ORD_MST WHERE STATUS_CODE = '40' AND {Y2023}",
    ),
    Question(
        7, "How many orders were shipped to Busan?", "erp", "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan'"
    ),
    Question(
        8, "How many orders were paid by credit card?", "erp", "SELECT COUNT(*) FROM ORD_MST WHERE PAY_MTHD_CD = '01'"
    ),
    Question(9, "How many VIP customers are there?", "erp", "SELECT COUNT(*) FROM CUST_MST WHERE CUST_GRD_CD = 'V'"),
    Question(
        10, "How many customers are in the Seoul region?", "erp", "SELECT COUNT(*) FROM CUST_MST WHERE REGION_CD = '11'"
    ),
    Question(
        11, "How many employees work in the IT department?", "erp", "SELECT COUNT(*) FROM EMP_MST WHERE DEPT_CD = 'D50'"
    ),
    Question(
        12,
        "How many order lines were returned, and for what total amount?",
        "erp",
        "SELECT COUNT(*), SUM(RET_AMT) FROM RET_DTL",
    ),
    Question(13, "What is the total amount of all returns?", "erp", "SELECT SUM(RET_AMT) FROM RET_DTL"),
    Question(
        14,
        "Which product category has the most products?",
        "erp",
        "SELECT d.CODE_NM, p.CTGRY_CD FROM PRD_MST p JOIN CODE_DTL d ON d.CODE_GRP = 'PRD_CTGRY' "
        "AND d.CODE_CD = p.CTGRY_CD GROUP BY p.CTGRY_CD, d.CODE_NM ORDER BY COUNT(*) DESC LIMIT 1",
        match="any",
    ),
    Question(
        15,
        "Which customer placed the most orders?",
        "erp",
        "SELECT c.CUST_NM, c.CUST_ID FROM ORD_MST o JOIN CUST_MST c ON c.CUST_ID = o.CUST_ID "
        "GROUP BY c.CUST_ID, c.CUST_NM ORDER BY COUNT(*) DESC, c.CUST_ID LIMIT 1",
        match="any",
    ),
    Question(
        16,
        "Which product sold the largest total quantity?",
        "erp",
        "SELECT p.PRD_NM, p.PRD_CD FROM ORD_DTL_H d JOIN PRD_MST p ON p.PRD_CD = d.PRD_CD "
        "GROUP BY p.PRD_CD, p.PRD_NM ORDER BY SUM(d.QTY) DESC, p.PRD_CD LIMIT 1",
        match="any",
    ),
    Question(
        17, "What was the average order amount in 2024?", "erp", f"SELECT AVG(TOT_AMT) FROM ORD_MST WHERE {Y2024}"
    ),
    Question(
        18,
        "How many orders did customer C000551 place?",
        "erp",
        "SELECT COUNT(*) FROM ORD_MST WHERE CUST_ID = 'C000551'",
    ),
    Question(
        19,
        "How many orders have more than five order lines?",
        "erp",
        "SELECT COUNT(*) FROM (SELECT ORD_NO FROM ORD_DTL_H GROUP BY ORD_NO HAVING COUNT(*) > 5)",
    ),
    Question(
        20,
        "How many shipments did CJ Logistics carry?",
        "erp",
        "SELECT COUNT(*) FROM SHIP_HIST WHERE CARRIER_CD = 'CJ'",
    ),
    Question(
        21,
        "What is the total stock quantity in the Busan Hub warehouse?",
        "erp",
        "SELECT SUM(STK_QTY) FROM STK_INV WHERE WH_CD = 'W02'",
    ),
    Question(
        22,
        "How many warehouse stock entries are below their safety stock?",
        "erp",
        "SELECT COUNT(*) FROM STK_INV WHERE STK_QTY < SAFE_QTY",
    ),
    Question(
        23,
        "What was the total sales amount in 2023 according to the monthly sales summary?",
        "erp",
        "SELECT SUM(AMT) FROM SALES_2023",
    ),
    Question(
        24,
        "How many orders were placed in December 2023?",
        "erp",
        "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT >= '2023-12-01' AND ORD_DT < '2024-01-01'",
    ),
    Question(
        25,
        "How many orders placed in 2024 were paid with mobile pay?",
        "erp",
        f"SELECT COUNT(*) FROM ORD_MST WHERE PAY_MTHD_CD = '04' AND {Y2024}",
    ),
    Question(26, "What is the largest single order amount?", "erp", "SELECT MAX(TOT_AMT) FROM ORD_MST"),
    Question(
        27,
        "How many different customers placed an order in 2024?",
        "erp",
        f"SELECT COUNT(DISTINCT CUST_ID) FROM ORD_MST WHERE {Y2024}",
    ),
    Question(28, "How many invoices are overdue?", "billing", "SELECT COUNT(*) FROM INV_HDR WHERE INV_STAT_CD = 'OD'"),
    Question(
        29, "What is the total amount of all invoice payments received?", "billing", "SELECT SUM(PAID_AMT) FROM PAYMENT"
    ),
    Question(
        30,
        "How many billing customers are in Japan?",
        "billing",
        "SELECT COUNT(*) FROM BILL_CUST WHERE COUNTRY_CD = 'JP'",
    ),
]


# --- expected values and matching -----------------------------------------------------------------------------------


def expected_row(paths: dict[str, Path], question: Question) -> list[Any]:
    with sqlite3.connect(f"file:{paths[question.database]}?mode=ro", uri=True) as connection:
        row = connection.execute(question.reference).fetchone()
    return list(row)


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _numbers(text: str) -> list[float]:
    found = []
    for token in _NUMBER.findall(text):
        try:
            found.append(float(token.replace(",", "")))
        except ValueError:
            continue
    return found


def _same_number(expected: float, candidate: float) -> bool:
    if float(expected).is_integer() and abs(expected) < 100_000:
        return candidate == expected
    return abs(candidate - expected) <= max(abs(expected) * 0.001, 0.01)


def _found(value: Any, text: str, cells: list[Any]) -> bool:
    if value is None:
        return False
    if isinstance(value, int | float):
        numbers = _numbers(text) + [float(c) for c in cells if isinstance(c, int | float) and not isinstance(c, bool)]
        numbers += [n for c in cells if isinstance(c, str) for n in _numbers(c)]
        return any(_same_number(float(value), n) for n in numbers)
    wanted = str(value).strip().casefold()
    return wanted in text.casefold() or any(str(c).strip().casefold() == wanted for c in cells)


def is_correct(question: Question, expected: list[Any], text: str, cells: list[Any]) -> bool:
    hits = [_found(value, text, cells) for value in expected]
    return any(hits) if question.match == "any" else all(hits)


def _cells(rows: list[list[Any]]) -> list[Any]:
    return [cell for row in rows[:20] for cell in row]


# --- running SQL read-only (the whole-schema prompt and the references) ---------------------------------------


def run_readonly(path: Path, sql: str) -> tuple[list[list[Any]], str | None]:
    deadline = time.monotonic() + SQL_TIMEOUT_S
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        cursor = connection.execute(sql)
        return [list(row) for row in cursor.fetchmany(ROW_CAP)], None
    except sqlite3.Error as exc:
        return [], str(exc)
    finally:
        connection.close()


# --- Spider dev: a fixed-hash subset, executed against its own SQLite files ------------------------------------------

SPIDER_LABEL = "Spider 1.0 dev"


@dataclass(frozen=True)
class SpiderQuestion:
    id: int  # the question's index in dev.json
    text: str
    database: str
    reference: str
    gold_tables: tuple[str, ...]
    half: str  # "tune" or "held-out", by the same hash


def spider_hash(index: int) -> str:
    return hashlib.sha256(f"spider-dev:{index}".encode()).hexdigest()


def spider_questions(paths: dict[str, Path], count: int) -> list[SpiderQuestion]:
    """`count` questions of Spider dev whose database is here, chosen by a fixed hash of their index (the same ones
    every run); each half of the hash space is one half of the set."""
    items = json.loads((SPIDER / ".." / "dev.json").resolve().read_text())
    gold = {}
    for line in GOLD.read_text().splitlines():
        entry = json.loads(line)
        if entry["benchmark"] == SPIDER_LABEL:
            gold[entry["idx"]] = tuple(entry["gold_tables"])
    usable = [i for i, item in enumerate(items) if item["db_id"] in paths and gold.get(i)]
    chosen = sorted(usable, key=spider_hash)[:count]
    return [
        SpiderQuestion(
            i,
            items[i]["question"],
            items[i]["db_id"],
            items[i]["query"],
            gold[i],
            "tune" if int(spider_hash(i)[-1], 16) % 2 == 0 else "held-out",
        )
        for i in sorted(chosen, key=spider_hash)
    ]


def _normal(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return round(float(value), 4)
    return value


def _row_key(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(sorted((_normal(v) for v in row), key=repr))


def same_result(predicted: Sequence[Sequence[Any]], gold: Sequence[Sequence[Any]], truncated: bool = False) -> bool:
    """Execution match: the same rows (as multisets, each row's values in any column order)."""
    if truncated or len(gold) > ROW_CAP:
        return {_row_key(r) for r in predicted} <= {_row_key(r) for r in gold}
    return Counter(_row_key(r) for r in predicted) == Counter(_row_key(r) for r in gold)


# --- what a system is measured on ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    set: str  # "erp" or "spider"
    id: int
    text: str
    database: str
    gold_tables: frozenset[str]  # upper case
    half: str
    question: Question | None = None  # the ERP question (its expected row decides)
    expected: tuple[Any, ...] = ()
    gold_rows: tuple[tuple[Any, ...], ...] = ()

    def check(self, answer: str, run: dict[str, Any] | None) -> bool:
        rows = run["rows"] if run else []
        if self.question is not None:
            return is_correct(self.question, list(self.expected), answer, _cells(rows))
        if run is None or run.get("database") != self.database:
            return False
        return same_result(rows, self.gold_rows, bool(run.get("truncated")))


def erp_items(paths: dict[str, Path], limit: int) -> list[Item]:
    items = []
    for q in QUESTIONS[:limit]:
        tables = frozenset(t.name.upper() for t in sqlglot.parse_one(q.reference, read="sqlite").find_all(exp.Table))
        items.append(Item("erp", q.id, q.text, q.database, tables, "", q, tuple(expected_row(paths, q))))
    return items


def spider_items(paths: dict[str, Path], count: int) -> list[Item]:
    items = []
    for q in spider_questions(paths, count):
        rows, error = run_readonly(paths[q.database], q.reference)
        if error is not None:
            continue
        gold = frozenset(t.upper() for t in q.gold_tables)
        items.append(Item("spider", q.id, q.text, q.database, gold, q.half, gold_rows=tuple(map(tuple, rows))))
    return items


@dataclass
class Attempt:
    correct: bool = False
    status: str = ""
    rounds: int = 0
    model_calls: int = 0
    seconds: float = 0.0
    input_tokens: int = 0  # prompt tokens sent (the server may have read a shared beginning from its cache)
    answer: str = ""
    database: str | None = None
    step: str = ""  # for a wrong answer: selection, sql, repair, ambiguity (or no_sql)
    sql: list[dict[str, Any]] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)  # guided: the tables the SQL call was shown (database.table)
    pruned: str = ""  # guided: the model's statement, where a join that multiplied a sum was taken out of it
