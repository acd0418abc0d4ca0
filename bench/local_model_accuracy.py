"""Answer accuracy of the local model (`tablescout model install-local`) through tablescout, side by side with the same
model given the whole schema in one prompt and no tablescout.

Thirty fixed questions about the sample ERP and billing databases, each with a reference SQL statement whose first
result row is the expected answer (computed on the generated sample databases, so the figures follow the generator).
For each question, in one run against one local model server (`tablescout model serve-local` as a child process):
- **tablescout**: one full turn in this process (search → cards → read-only SQL → answer; JSON-constrained replies,
  the turn engine's SQL checks and retry rounds);
- **schema prompt**: the model gets the DDL of every table of both databases (`sqlite_master`) and the question, and
  replies with one `{"database", "sql"}` object (constrained to that JSON schema); the SQL runs once, read-only.

A question counts as answered correctly when every value of the expected row (or, for "which …" questions, any of
them: a name or its code) appears in the answer text or among the cells of the last SQL statement that ran without
error. Numbers compare exactly for counts and within 0.1 % for amounts and averages; text compares without case.
Reported per system: accuracy, rounds per turn and seconds per turn. The questions were written before any run and
were not changed after seeing answers.

Run:  python bench/local_model_accuracy.py [--size 0.5b|1.5b] [--limit N] [--deadline 300]
(writes bench/results/local_model_accuracy_<size>.json and .md after every question, so a partial run keeps its
figures).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import openai  # noqa: E402
import sqlglot  # noqa: E402
from bench_data import GOLD, SPIDER, copy_spider  # noqa: E402
from sqlglot import exp  # noqa: E402

from catalog.analysis import AnalysisOptions  # noqa: E402
from catalog.registration import add_source  # noqa: E402
from catalog.sample_erp import build_sqlite  # noqa: E402
from core.config.settings import Settings  # noqa: E402
from core.store import migrate  # noqa: E402
from core.store.database import Store, open_store  # noqa: E402
from core.store.models import Turn  # noqa: E402
from tablescout.cli.model_cmd import LocalEndpoint, local_model_server  # noqa: E402
from tablescout.cli.turn_session import ConsoleSession  # noqa: E402
from workers.catalog_refresh import refresh_source  # noqa: E402
from workers.models import local_gguf  # noqa: E402

RESULTS = REPO / "bench" / "results"
NAME = "local_model_accuracy"
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

BASELINE_SYSTEM = (
    "You write one SQLite query that answers the user's question from the databases below. Reply with JSON only: "
    '{"database": "<database name>", "sql": "<one SELECT statement>"}.'
)
BASELINE_SCHEMA = {
    "type": "object",
    "properties": {"database": {"type": "string", "enum": ["erp", "billing"]}, "sql": {"type": "string"}},
    "required": ["database", "sql"],
    "additionalProperties": False,
}


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


def _hash(index: int) -> str:
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
    chosen = sorted(usable, key=_hash)[:count]
    return [
        SpiderQuestion(
            i,
            items[i]["question"],
            items[i]["db_id"],
            items[i]["query"],
            gold[i],
            "tune" if int(_hash(i)[-1], 16) % 2 == 0 else "held-out",
        )
        for i in sorted(chosen, key=_hash)
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


def _last_good(sql: list[dict[str, Any]]) -> dict[str, Any] | None:
    ran = [run for run in sql if not run.get("error")]
    return ran[-1] if ran else None


def _tables_of(run: dict[str, Any] | None) -> set[str]:
    if run is None:
        return set()
    try:
        tree = sqlglot.parse_one(run["sql"].split("\n-- for you:")[0], read="sqlite")
    except (sqlglot.errors.SqlglotError, ValueError):
        return set()
    return {t.name.upper() for t in tree.find_all(exp.Table)}


def turn_attempt(session: ConsoleSession, item: Item) -> Attempt:
    session.thread_id = uuid.uuid4().hex  # a conversation of its own: no history from earlier questions
    started = time.monotonic()
    turn_id = session.submit(item.text)
    result = session.run(turn_id, lambda _status: None)
    seconds = time.monotonic() - started
    with session.store.transaction() as db:
        turn = db.get(Turn, turn_id)
        guided = dict((turn.result or {}).get("guided") or {}) if turn is not None else {}
        usage = dict(turn.usage or {}) if turn is not None else {}
    last = _last_good(result["sql"])
    correct = item.check(result["answer"], last)
    attempt = Attempt(
        correct=correct,
        status=result["status"],
        rounds=int(result["rounds"]),
        model_calls=int(guided.get("model_calls", result["rounds"])),
        seconds=round(seconds, 1),
        input_tokens=int(usage.get("input_tokens", 0)),
        answer=result["answer"][:400],
        database=last["database"] if last else None,
        sql=[
            {"sql": r["sql"], "error": (r.get("error") or "")[:300] or None, "rows": r["rows"][:3]}
            for r in result["sql"]
        ],
    )
    attempt.tables = [str(t) for t in guided.get("tables", [])]
    attempt.pruned = str(guided.get("pruned") or "")
    if not correct:
        attempt.step = _failing_step(item, attempt, last, guided)
    return attempt


def _sql_entry(run: dict[str, Any]) -> dict[str, Any]:
    return {"sql": run["sql"], "error": (run.get("error") or "")[:300] or None, "rows": run["rows"][:3]}


def _failing_step(item: Item, attempt: Attempt, last: dict[str, Any] | None, guided: dict[str, Any]) -> str:
    if guided:
        if guided.get("step") == "ambiguity":
            return "ambiguity"
        tables = [str(t) for t in guided.get("tables", [])]
        databases = {t.split(".", 1)[0] for t in tables}
        shown = {t.rsplit(".", 1)[-1].upper() for t in tables}
        if databases != {item.database} or not item.gold_tables <= shown:
            return "selection"
        return "repair" if guided.get("repaired") else "sql"
    if last is None:
        return "no_sql"
    if last["database"] != item.database or not item.gold_tables <= _tables_of(last):
        return "selection"
    return "sql"


def schema_attempt(
    client: openai.OpenAI, schemas: dict[str, str], paths: dict[str, Path], item: Item, every: bool = False
) -> Attempt:
    """The model given a whole schema in one prompt (ERP: both sample databases; Spider: the question's own, or with
    `every` the schemas of all registered databases, in name order, among which the model chooses)."""
    databases = ["erp", "billing"] if item.set == "erp" else (sorted(paths) if every else [item.database])
    schema = "\n\n".join(schemas[d] for d in databases)
    answer_schema = json.loads(json.dumps(BASELINE_SCHEMA))
    answer_schema["properties"]["database"]["enum"] = databases
    started = time.monotonic()
    try:
        response = client.chat.completions.create(
            model="local",
            max_tokens=512,
            messages=[
                {"role": "system", "content": f"{BASELINE_SYSTEM}\n\n{schema}"},
                {"role": "user", "content": item.text},
            ],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "one_query", "strict": True, "schema": answer_schema},
            },
        )
        reply = json.loads(response.choices[0].message.content or "")
        database, sql = str(reply["database"]), str(reply["sql"])
        tokens = response.usage.prompt_tokens if response.usage else 0
    except (openai.OpenAIError, ValueError, KeyError, TypeError) as exc:
        return Attempt(
            status="failed",
            rounds=1,
            model_calls=1,
            seconds=round(time.monotonic() - started, 1),
            answer=str(exc)[:300],
        )
    rows, error = run_readonly(paths.get(database, paths[databases[0]]), sql)
    run = None if error else {"database": database, "rows": rows, "truncated": len(rows) >= ROW_CAP}
    correct = item.check("", run)
    return Attempt(
        correct=correct,
        status="error" if error else "ran",
        rounds=1,
        model_calls=1,
        seconds=round(time.monotonic() - started, 1),
        input_tokens=tokens,
        database=database,
        step="" if correct else ("selection" if database != item.database else "sql"),
        sql=[{"database": database, "sql": sql, "error": error, "rows": rows[:3]}],
    )


def schema_text(name: str, path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        ddl = [row[0] for row in connection.execute("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return f"Database {name} (SQLite):\n" + ";\n".join(ddl) + ";"


# --- installations ---------------------------------------------------------------------------------------------------


def _installation(home: Path, paths: dict[str, Path]) -> Settings:
    """A store with `paths` registered and analysed (kept in `home`: a second run reuses it)."""
    settings = Settings(home=home)
    ready = home / "analysed"
    if ready.exists():
        return settings
    store = open_store(settings)
    migrate.upgrade(store.engine)
    for name, path in paths.items():
        add_source(settings, store, name, f"sqlite:///{path}", [])
    settings = Settings(home=home)
    for name in paths:
        report = refresh_source(settings, store, name, AnalysisOptions())
        if report.analysis.error:
            raise SystemExit(f"analysis of {name} failed: {report.analysis.error}")
    store.close()
    ready.write_text("ok\n")
    return settings


def erp_installation(work: Path) -> tuple[Settings, dict[str, Path]]:
    home = work / "erp"
    sample = home / "sample"
    paths = {"erp": sample / "erp.sqlite", "billing": sample / "billing.sqlite"}
    if not (home / "analysed").exists():
        paths = build_sqlite(sample)
    return _installation(home, paths), paths


def spider_installation(work: Path) -> tuple[Settings, dict[str, Path]]:
    home = work / "spider"
    directory = home / "databases"
    paths = (
        {p.stem: p for p in sorted(directory.glob("*.sqlite"))}
        if (home / "analysed").exists()
        else copy_spider(directory)
    )
    return _installation(home, paths), paths


# --- verified examples (issue: feedback that teaches verified queries) ------------------------------------------


def example_half(index: int) -> bool:
    """Spider dev questions whose gold SQL is approved as a verified example: the upper half of the same hash that
    chooses the evaluated questions (which are the lowest hashes, so never among them)."""
    return _hash(index) >= "8"


def approve_spider_examples(store: Store, settings: Settings, items: Sequence[Item]) -> list[int]:
    """Approve the gold SQL of the example half as verified examples (none with an evaluated question's text);
    the ids, to delete after the run."""
    from core.store.repositories import catalog as catalog_repo
    from core.store.repositories import feedback as feedback_repo
    from core.store.repositories import sources as source_repo
    from search.encoders import embedder_for

    dev = json.loads((SPIDER / ".." / "dev.json").resolve().read_text())
    evaluated = {" ".join(i.text.lower().split()) for i in items if i.set == "spider"}
    chosen: list[tuple[str, str, str, list[str]]] = []
    with store.transaction() as session:
        for index, item in enumerate(dev):
            if not example_half(index) or " ".join(item["question"].lower().split()) in evaluated:
                continue
            source = source_repo.by_name(session, item["db_id"])
            if source is None:
                continue
            try:
                tree = sqlglot.parse_one(item["query"], read="sqlite")
            except sqlglot.errors.SqlglotError:
                continue
            names = {t.name.lower(): t.name for t in catalog_repo.tables_of(session, source.id)}
            read = list(dict.fromkeys(t.name.lower() for t in tree.find_all(exp.Table)))
            if read and all(t in names for t in read):
                chosen.append((item["question"], source.name, item["query"], [names[t] for t in read]))
    vectors = embedder_for(settings).embed([question for question, _, _, _ in chosen])
    ids = []
    with store.transaction() as session:
        for (question, database, sql, tables), vector in zip(chosen, vectors, strict=True):
            example = feedback_repo.add_example(
                session,
                turn_id=None,
                question=question,
                database=database,
                sql=sql,
                tables=tables,
                platform="slack",
                user_id="bench",
            )
            feedback_repo.review_example(session, example, "approved", "bench", {"embedding": vector.tolist()})
            ids.append(example.id)
    return ids


def delete_examples(store: Store, ids: Sequence[int]) -> None:
    from core.store.repositories import feedback as feedback_repo

    with store.transaction() as session:
        for example_id in ids:
            feedback_repo.delete_example(session, example_id)


# --- run and report ----------------------------------------------------------------------------------------------

SYSTEMS = ("guided", "examples", "loop", "schema", "allschema")
LABELS = {
    "guided": "guided path (one search → compact schema → one SQL, bounded repair)",
    "examples": "guided path with verified examples (Spider only: the gold SQL of the other hash half approved)",
    "loop": "tool loop (search → cards → SQL rounds)",
    "schema": "whole schema in one prompt, one SQL",
    "allschema": (
        "Spider only: the schemas of all registered databases in one prompt, the model chooses the database, one SQL "
        "(the server's prompt cache keeps the schemas after the first question)"
    ),
}


def summary(attempts: list[Attempt]) -> dict[str, Any]:
    if not attempts:
        return {}
    seconds = [a.seconds for a in attempts]
    wrong = [a for a in attempts if not a.correct]
    return {
        "questions": len(attempts),
        "correct": sum(a.correct for a in attempts),
        "accuracy": round(sum(a.correct for a in attempts) / len(attempts), 3),
        "rounds_per_turn": round(statistics.mean(a.rounds for a in attempts), 2),
        "model_calls_per_turn": round(statistics.mean(a.model_calls for a in attempts), 2),
        "input_tokens_per_turn": round(statistics.mean(a.input_tokens for a in attempts)),
        "seconds_per_turn_mean": round(statistics.mean(seconds), 1),
        "seconds_per_turn_median": round(statistics.median(seconds), 1),
        "failing_steps": {s: sum(a.step == s for a in wrong) for s in sorted({a.step for a in wrong})},
        "joins_taken_out": sum(bool(a.pruned) for a in attempts),
        "joins_taken_out_correct": sum(bool(a.pruned) and a.correct for a in attempts),
        "statuses": {s: sum(a.status == s for a in attempts) for s in sorted({a.status for a in attempts})},
    }


def _groups(items: list[Item]) -> list[tuple[str, list[Item]]]:
    groups = []
    for name in ("erp", "spider"):
        of_set = [i for i in items if i.set == name]
        if not of_set:
            continue
        groups.append((name, of_set))
        if name == "spider":
            groups += [(f"spider {half}", [i for i in of_set if i.half == half]) for half in ("tune", "held-out")]
    return groups


def write_results(meta: dict[str, Any], items: list[Item], results: dict[str, dict[tuple[str, int], Attempt]]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = meta.get("results") or f"{NAME}_{meta['size']}"
    tables: dict[str, dict[str, Any]] = {}
    for group, members in _groups(items):
        for system in SYSTEMS:
            done = [results[system][(i.set, i.id)] for i in members if (i.set, i.id) in results.get(system, {})]
            if done:
                tables.setdefault(group, {})[system] = summary(done) | {"of": len(members)}
    per_question = [
        {"set": i.set, "id": i.id, "half": i.half, "question": i.text, "database": i.database}
        | {s: asdict(results[s][(i.set, i.id)]) for s in SYSTEMS if (i.set, i.id) in results.get(s, {})}
        for i in items
    ]
    payload = meta | {"summaries": tables, "questions": per_question}
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    lines = [
        "# Local model: answer accuracy, guided path vs. tool loop vs. the whole schema in one prompt",
        "",
        f"Model {meta['model']} (Q4_K_M GGUF, llama.cpp via xllamacpp, {meta['threads']} CPU threads, "
        f"{meta['cpus']} cores; {meta.get('note') or 'a machine shared with other work'}), one local model server for "
        "every system. "
        f"Sample ERP: {meta['erp_questions']} questions on the erp and billing databases (both registered, nothing "
        f"pinned). Spider dev: {meta['spider_questions']} questions chosen by a fixed hash of their index, all "
        f"{meta['spider_databases']} databases with files registered in one installation, nothing pinned; the "
        "hash also splits them into a tuning half and a held-out half. The whole-schema prompt gets both ERP "
        "databases, and for Spider the schema of the question's own database (it is told the database); allschema "
        "gets every Spider schema. Turn "
        f"deadline {meta['deadline_s']:.0f} s. Run {meta['started']}, {meta['elapsed_min']:.0f} min"
        + (" (partial: see the counts)." if meta.get("partial") else "."),
        "",
        "Correct: ERP, the expected values in the answer or the last SQL's cells; Spider, the last SQL that ran "
        "on the question's database returned the gold SQL's rows (multisets). Failing step of a wrong answer: "
        "selection (wrong database, or a gold table not among those the SQL could use), sql (the statement ran or "
        "failed on the right tables), repair (it failed or found nothing, and the repair did not fix it), ambiguity "
        "(the answer asked which database), no_sql.",
        "",
        "| set | system | measured | correct | accuracy | rounds | model calls | prompt tokens "
        "| s per question (mean / median) | failing steps |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for group, systems in tables.items():
        for system, f in systems.items():
            steps = ", ".join(f"{k} {v}" for k, v in f["failing_steps"].items()) or "-"
            lines.append(
                f"| {group} | {system} | {f['questions']}/{f['of']} | {f['correct']} | {f['accuracy']:.0%} | "
                f"{f['rounds_per_turn']} | {f['model_calls_per_turn']} | {f['input_tokens_per_turn']} | "
                f"{f['seconds_per_turn_mean']} / "
                f"{f['seconds_per_turn_median']} | {steps} |"
            )
    taken = [
        f"{group} {system}: {f['joins_taken_out']} ({f['joins_taken_out_correct']} of them correct)"
        for group, systems in tables.items()
        for system, f in systems.items()
        if f.get("joins_taken_out")
    ]
    if taken:
        lines += ["", "Joins taken out of the model's statement before it ran (`workers.turns.join_pruning`): "]
        lines[-1] += "; ".join(taken) + "."
    lines += ["", "Systems: " + "; ".join(f"{k}: {v}" for k, v in LABELS.items()) + ".", ""]
    lines += [
        "| set | # | half | question | " + " | ".join(SYSTEMS) + " |",
        "|---|---|---|---|" + "---|" * len(SYSTEMS),
    ]
    for row in per_question:
        cells = []
        for system in SYSTEMS:
            a: dict[str, Any] | None = row.get(system)  # type: ignore[assignment]
            if a is None:
                cells.append("")
                continue
            mark = "✓" if a["correct"] else f"✗ {a['step']}"
            cells.append(f"{mark} {a['seconds']}s" + (" (join out)" if a.get("pruned") else ""))
        lines.append(f"| {row['set']} | {row['id']} | {row['half']} | {row['question']} | {' | '.join(cells)} |")
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(local_gguf.SOURCES), default=local_gguf.DEFAULT_SIZE)
    parser.add_argument("--limit", type=int, default=len(QUESTIONS), help="Only the first N ERP questions.")
    parser.add_argument("--spider", type=int, default=24, help="Spider dev questions (fixed hash); 0: none.")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"Among {', '.join(SYSTEMS)}; in this order.")
    parser.add_argument("--sets", default="erp,spider")
    parser.add_argument("--deadline", type=float, default=300.0, help="Turn deadline in seconds.")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: every usable core).")
    parser.add_argument("--work", type=Path, default=None, help="Keep the installations here (reused when present).")
    parser.add_argument(
        "--loop-limit", type=int, default=None, help="The loop on only the first N questions of each set (slowest)."
    )
    parser.add_argument("--note", default="", help="What else the machine was doing (for the results).")
    parser.add_argument("--results", default=None, help="Results file name without extension (default by size).")
    args = parser.parse_args()
    begun = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ts-local-bench-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        sets = [s.strip() for s in args.sets.split(",") if s.strip()]
        installations: dict[str, tuple[Settings, dict[str, Path]]] = {}
        if "erp" in sets:
            installations["erp"] = erp_installation(work)
        if "spider" in sets and args.spider:
            installations["spider"] = spider_installation(work)
        first = next(iter(installations.values()))[0]
        print(f"installing the {args.size} local model from its part packages…", flush=True)
        local_gguf.install_from_parts(work, local_gguf.SOURCES[args.size])
        serving = first.model_copy(update={"home": work})
        with local_model_server(serving, threads=args.threads) as endpoint:
            run_all(args, begun, installations, endpoint)


def run_all(
    args: argparse.Namespace,
    begun: float,
    installations: dict[str, tuple[Settings, dict[str, Path]]],
    endpoint: LocalEndpoint,
) -> None:
    from workers.models.llama_server import available_cores

    items: list[Item] = []
    schemas: dict[str, str] = {}
    stores: dict[str, Store] = {}
    for name, (settings, paths) in installations.items():
        items += erp_items(paths, args.limit) if name == "erp" else spider_items(paths, args.spider)
        schemas |= {db: schema_text(db, path) for db, path in paths.items()}
        stores[name] = open_store(settings)
    client = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=args.deadline)
    meta = {
        "size": args.size,
        "model": endpoint.model.name,
        "threads": args.threads or available_cores(),
        "cpus": available_cores(),
        "deadline_s": args.deadline,
        "results": args.results,
        "note": args.note,
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "erp_questions": sum(i.set == "erp" for i in items),
        "spider_questions": sum(i.set == "spider" for i in items),
        "spider_databases": len(installations["spider"][1]) if "spider" in installations else 0,
    }
    systems = [s.strip() for s in args.systems.split(",") if s.strip() in SYSTEMS]
    results: dict[str, dict[tuple[str, int], Attempt]] = {s: {} for s in SYSTEMS}
    sessions: dict[tuple[str, str], ConsoleSession] = {}
    # The loop is slowest and runs last; before it, each set is measured on the guided path and then on the whole
    # schema, so a run cut short still compares them on the same questions (the server's prompt cache holds one
    # prompt beginning at a time, so one system runs through a set before the next).
    order = [(s, i) for group in ("erp", "spider") for s in systems if s != "loop" for i in items if i.set == group]
    loop_items = [i for group in ("erp", "spider") for i in [i for i in items if i.set == group][: args.loop_limit]]
    order += [(s, i) for s in systems if s == "loop" for i in loop_items]
    order = [(s, i) for s, i in order if s not in ("examples", "allschema") or i.set == "spider"]
    approved: list[int] = []
    try:
        for system, item in order:
            settings, paths = installations[item.set]
            if system == "examples" and not approved:
                approved = approve_spider_examples(stores["spider"], settings, items)
                meta["examples_approved"] = len(approved)
                print(f"{len(approved)} verified examples approved from the other hash half", flush=True)
            elif system != "examples" and approved:
                delete_examples(stores["spider"], approved)
                approved = []
            if system in ("schema", "allschema"):
                attempt = schema_attempt(client, schemas, paths, item, every=system == "allschema")
            else:
                key = (system, item.set)
                if key not in sessions:
                    path = "guided" if system == "examples" else system
                    config = endpoint.settings_for(settings).model_copy(
                        update={"turn_deadline_s": args.deadline, "turn_path": path}
                    )
                    sessions[key] = ConsoleSession(config, stores[item.set])
                attempt = turn_attempt(sessions[key], item)
            results[system][(item.set, item.id)] = attempt
            print(
                f"{system:6s} {item.set:6s} {item.id:4d} {'✓' if attempt.correct else '✗ ' + attempt.step} "
                f"{attempt.status} {attempt.model_calls} calls {attempt.seconds}s",
                flush=True,
            )
            partial = sum(len(r) for r in results.values()) < len(order)
            write_results(meta | {"elapsed_min": (time.monotonic() - begun) / 60, "partial": partial}, items, results)
    finally:
        if approved:
            delete_examples(stores["spider"], approved)
        client.close()
        for store in stores.values():
            store.close()


if __name__ == "__main__":
    main()
