"""What the local-model benchmark (bench.local_model_accuracy) asks and how an answer is judged: the thirty sample
ERP questions with their reference SQL, a fixed-hash subset of Spider dev with its gold SQL, the items a system is
measured on, and the record of one attempt.
"""

from __future__ import annotations

import hashlib
import json
import random
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
    match: str = "all"  # "all": every value of the expected row; "any": one of them; "rows": one of each row's
    also: str = ""  # another reading of the question, equally right (its rows are accepted too)
    before: str = ""  # asked first in the same conversation (a follow-up); not scored


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


#: The issue's questions a new user tripped over, the README's and the demo's own (written before any run of them).
#: "Last year" is read as the last full year the sample holds (2023), since the sample ends in June 2024.
Y2023_RET = "r.RET_DT >= '2023-01-01' AND r.RET_DT < '2024-01-01'"
BUSAN_2024 = f"SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan' AND {Y2024}"
SNAPSHOT = "How many orders were in the December 2023 snapshot?"
QUESTIONS += [
    Question(31, "How many orders shipped to Busan in 2024?", "erp", BUSAN_2024),
    Question(
        32,
        "What was our total sales amount by month in 2024?",
        "erp",
        f"SELECT substr(ORD_DT, 1, 7), SUM(TOT_AMT) FROM ORD_MST WHERE {Y2024} GROUP BY 1 ORDER BY 1",
        match="rows",
        also="SELECT SALES_YM, SUM(AMT) FROM SALES_2024 GROUP BY SALES_YM ORDER BY SALES_YM",
    ),
    Question(
        33,
        SNAPSHOT,
        "erp",
        "SELECT COUNT(*) FROM ORD_MST_202312",
        match="any",
        also="SELECT COUNT(*) FROM ORD_MST_202312 WHERE ORD_DT >= '2023-12-01' AND ORD_DT < '2024-01-01'",
    ),
    Question(
        34,
        "Which product categories had the most returns last year?",
        "erp",
        "SELECT d.CODE_NM, p.CTGRY_CD FROM RET_DTL r JOIN ORD_DTL_H l ON l.ORD_NO = r.ORD_NO AND l.LINE_NO = r.LINE_NO "
        "JOIN PRD_MST p ON p.PRD_CD = l.PRD_CD JOIN CODE_DTL d ON d.CODE_GRP = 'PRD_CTGRY' AND d.CODE_CD = p.CTGRY_CD "
        f"WHERE {Y2023_RET} GROUP BY p.CTGRY_CD, d.CODE_NM ORDER BY COUNT(*) DESC LIMIT 1",
        match="any",
    ),
    Question(35, "2024년 부산으로 배송된 주문은 몇 건인가요?", "erp", BUSAN_2024),
    Question(36, "show me revenue", "erp", "SELECT SUM(TOT_AMT) FROM ORD_MST", before=SNAPSHOT),
    Question(
        37,
        "Which five customers spent the most in 2023?",
        "erp",
        "SELECT c.CUST_NM, c.CUST_ID FROM ORD_MST o JOIN CUST_MST c ON c.CUST_ID = o.CUST_ID "
        f"WHERE o.{Y2023.replace(' AND ', ' AND o.')} GROUP BY c.CUST_ID, c.CUST_NM "
        "ORDER BY SUM(o.TOT_AMT) DESC LIMIT 5",
        match="rows",
    ),
]


# --- expected values and matching -----------------------------------------------------------------------------------


def expected_readings(paths: dict[str, Path], question: Question) -> list[list[list[Any]]]:
    """The rows of the reference and of the other accepted reading, each."""
    readings = []
    with sqlite3.connect(f"file:{paths[question.database]}?mode=ro", uri=True) as connection:
        for sql in (question.reference, question.also):
            if sql:
                readings.append([list(row) for row in connection.execute(sql).fetchmany(ROW_CAP)])
    return readings


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


def _row_found(row: Sequence[Any], text: str, cells: list[Any]) -> bool:
    """A row of a breakdown or list is there: each of its figures, or (a row of names) one of its values."""
    figures = [v for v in row if isinstance(v, int | float) and not isinstance(v, bool)]
    if figures:
        return all(_found(v, text, cells) for v in figures)
    return any(_found(v, text, cells) for v in row)


def is_correct_reading(question: Question, readings: Sequence[list[list[Any]]], text: str, cells: list[Any]) -> bool:
    """Correct on any accepted reading: its first row (all or any of its values), or with `rows` one value of each
    of its rows."""
    for rows in readings:
        if not rows:
            continue
        if question.match == "rows":
            if len(cells) and all(_row_found(row, text, cells) for row in rows[:20]):
                return True
        elif is_correct(question, rows[0], text, cells):
            return True
    return False


def _cells(rows: list[list[Any]]) -> list[Any]:
    return [cell for row in rows[:40] for cell in row]


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


def spider_questions(paths: dict[str, Path], count: int, seed: int | None = None) -> list[SpiderQuestion]:
    """`count` questions of Spider dev whose database is here, chosen by a fixed hash of their index (the same ones
    every run), or with `seed` a random sample drawn with that seed; the hash splits them into two halves either
    way (a question is in the same half in every sample)."""
    items = json.loads((SPIDER / ".." / "dev.json").resolve().read_text())
    gold = {}
    for line in GOLD.read_text().splitlines():
        entry = json.loads(line)
        if entry["benchmark"] == SPIDER_LABEL:
            gold[entry["idx"]] = tuple(entry["gold_tables"])
    usable = [i for i, item in enumerate(items) if item["db_id"] in paths and gold.get(i)]
    chosen = sorted(usable, key=spider_hash)[:count] if seed is None else random.Random(seed).sample(usable, count)
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
    question: Question | None = None  # the ERP question (its expected rows decide)
    expected: tuple[Any, ...] = ()  # the rows of each accepted reading
    gold_rows: tuple[tuple[Any, ...], ...] = ()
    reference: str = ""  # the gold or reference SQL (for the error table)
    before: str = ""  # asked first in the same conversation

    def check(self, answer: str, run: dict[str, Any] | None) -> bool:
        rows = run["rows"] if run else []
        if self.question is not None:
            return is_correct_reading(self.question, list(self.expected), answer, _cells(rows))
        if run is None or run.get("database") != self.database:
            return False
        return same_result(rows, self.gold_rows, bool(run.get("truncated")))


def erp_items(paths: dict[str, Path], limit: int) -> list[Item]:
    items = []
    for q in QUESTIONS[:limit]:
        tables = frozenset(t.name.upper() for t in sqlglot.parse_one(q.reference, read="sqlite").find_all(exp.Table))
        readings = tuple(expected_readings(paths, q))
        items.append(
            Item("erp", q.id, q.text, q.database, tables, "", q, readings, reference=q.reference, before=q.before)
        )
    return items


def spider_items(paths: dict[str, Path], count: int, seed: int | None = None) -> list[Item]:
    items = []
    for q in spider_questions(paths, count, seed):
        rows, error = run_readonly(paths[q.database], q.reference)
        if error is not None:
            continue
        gold = frozenset(t.upper() for t in q.gold_tables)
        gold_rows = tuple(map(tuple, rows))
        items.append(Item("spider", q.id, q.text, q.database, gold, q.half, gold_rows=gold_rows, reference=q.reference))
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
    output_tokens: int = 0  # tokens the model generated
    calls: list[list[int]] = field(default_factory=list)  # guided: [prompt tokens, generated tokens] per model call
    ms: dict[str, float] = field(default_factory=dict)  # guided: milliseconds in search, model calls, SQL, checks
    checks: list[str] = field(default_factory=list)  # guided: what the answer checks found (before any repair)
    doubt: str = ""  # guided: the doubt the answer stated
    #: guided: statements written for the SQL call, how many returned the chosen result, whether the first did
    candidates: dict[str, int] = field(default_factory=dict)
    error_kind: str = ""  # for a wrong answer: the error table's row (local_model_report.error_kind)
