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
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import openai  # noqa: E402

from catalog.analysis import AnalysisOptions  # noqa: E402
from catalog.registration import add_source  # noqa: E402
from catalog.sample_erp import build_sqlite  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store import migrate  # noqa: E402
from core.store.database import Store, open_store  # noqa: E402
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


@dataclass
class Attempt:
    correct: bool = False
    status: str = ""
    rounds: int = 0
    seconds: float = 0.0
    answer: str = ""
    sql: list[dict[str, Any]] = field(default_factory=list)


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


# --- the two systems -------------------------------------------------------------------------------------------------


def tablescout_turn(session: ConsoleSession, question: Question, expected: list[Any]) -> Attempt:
    session.thread_id = uuid.uuid4().hex  # a conversation of its own: no history from earlier questions
    started = time.monotonic()
    turn_id = session.submit(question.text)
    result = session.run(turn_id, lambda _status: None)
    seconds = time.monotonic() - started
    ran = [run for run in result["sql"] if not run.get("error")]
    cells = _cells(ran[-1]["rows"]) if ran else []
    return Attempt(
        correct=is_correct(question, expected, result["answer"], cells),
        status=result["status"],
        rounds=int(result["rounds"]),
        seconds=round(seconds, 1),
        answer=result["answer"][:500],
        sql=[{"sql": r["sql"], "error": r.get("error"), "rows": r["rows"][:3]} for r in result["sql"]],
    )


def schema_prompt(paths: dict[str, Path]) -> str:
    parts = []
    for name, path in paths.items():
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
            ddl = [
                row[0] for row in connection.execute("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
            ]
        parts.append(f"Database {name} (SQLite):\n" + ";\n".join(ddl) + ";")
    return "\n\n".join(parts)


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


def baseline_turn(
    client: openai.OpenAI, schema: str, paths: dict[str, Path], question: Question, expected: list[Any]
) -> Attempt:
    started = time.monotonic()
    try:
        response = client.chat.completions.create(
            model="local",
            max_tokens=512,
            messages=[
                {"role": "system", "content": f"{BASELINE_SYSTEM}\n\n{schema}"},
                {"role": "user", "content": question.text},
            ],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "one_query", "strict": True, "schema": BASELINE_SCHEMA},
            },
        )
        reply = json.loads(response.choices[0].message.content or "")
        database, sql = str(reply["database"]), str(reply["sql"])
    except (openai.OpenAIError, ValueError, KeyError, TypeError) as exc:
        return Attempt(status="failed", rounds=1, seconds=round(time.monotonic() - started, 1), answer=str(exc)[:300])
    rows, error = run_readonly(paths.get(database, paths["erp"]), sql)
    seconds = time.monotonic() - started
    return Attempt(
        correct=error is None and is_correct(question, expected, "", _cells(rows)),
        status="error" if error else "ran",
        rounds=1,
        seconds=round(seconds, 1),
        sql=[{"database": database, "sql": sql, "error": error, "rows": rows[:3]}],
    )


# --- installation, run and report -------------------------------------------------------------------------------------


def build_installation(home: Path, size: str) -> tuple[Settings, dict[str, Path]]:
    settings = Settings(home=home)
    store = open_store(settings)
    migrate.upgrade(store.engine)
    paths = build_sqlite(home / "sample")
    for name, path in paths.items():
        add_source(settings, store, name, f"sqlite:///{path}", [])
    settings = Settings(home=home)
    for name in paths:
        report = refresh_source(settings, store, name, AnalysisOptions())
        if report.analysis.error:
            raise SystemExit(f"analysis of {name} failed: {report.analysis.error}")
    store.close()
    print(f"installing the {size} local model from its part packages…", flush=True)
    local_gguf.install_from_parts(home, local_gguf.SOURCES[size])
    return settings, paths


def summary(attempts: list[Attempt]) -> dict[str, Any]:
    if not attempts:
        return {}
    seconds = [a.seconds for a in attempts]
    return {
        "questions": len(attempts),
        "correct": sum(a.correct for a in attempts),
        "accuracy": round(sum(a.correct for a in attempts) / len(attempts), 3),
        "rounds_per_turn": round(statistics.mean(a.rounds for a in attempts), 2),
        "seconds_per_turn_mean": round(statistics.mean(seconds), 1),
        "seconds_per_turn_median": round(statistics.median(seconds), 1),
        "statuses": {s: sum(a.status == s for a in attempts) for s in sorted({a.status for a in attempts})},
    }


def write_results(meta: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    ours = summary([Attempt(**r["tablescout"]) for r in rows])
    theirs = summary([Attempt(**r["schema_prompt"]) for r in rows])
    payload = meta | {"tablescout": ours, "schema_prompt": theirs, "questions": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = f"{NAME}_{meta['size']}"
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    lines = [
        "# Local model: answer accuracy through tablescout vs. the whole schema in one prompt",
        "",
        f"Model {meta['model']} (Q4_K_M GGUF, llama.cpp via xllamacpp, {meta['threads']} CPU threads, "
        f"{meta['cpus']} cores), {len(rows)} of {len(QUESTIONS)} questions on the sample ERP and billing databases; "
        f"turn deadline {meta['deadline_s']:.0f} s, {meta['max_rounds']} rounds at most. Run {meta['started']}, "
        f"{meta['elapsed_min']:.0f} min.",
        "",
        "| system | correct | accuracy | rounds per turn | seconds per turn (mean / median) | outcomes |",
        "|---|---|---|---|---|---|",
    ]
    for label, figures in (
        ("tablescout (search → cards → SQL → answer)", ours),
        ("schema in one prompt, one SQL", theirs),
    ):
        if not figures:
            continue
        outcomes = ", ".join(f"{k} {v}" for k, v in figures["statuses"].items())
        lines.append(
            f"| {label} | {figures['correct']}/{figures['questions']} | {figures['accuracy']:.0%} | "
            f"{figures['rounds_per_turn']} | {figures['seconds_per_turn_mean']} / "
            f"{figures['seconds_per_turn_median']} | {outcomes} |"
        )
    lines += ["", "| # | question | tablescout | rounds | s | schema prompt | s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        ours_row, theirs_row = r["tablescout"], r["schema_prompt"]
        lines.append(
            f"| {r['id']} | {r['question']} | {'✓' if ours_row['correct'] else '✗'} {ours_row['status']} | "
            f"{ours_row['rounds']} | {ours_row['seconds']} | {'✓' if theirs_row['correct'] else '✗'} "
            f"{theirs_row['status']} | {theirs_row['seconds']} |"
        )
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(local_gguf.SOURCES), default=local_gguf.DEFAULT_SIZE)
    parser.add_argument("--limit", type=int, default=len(QUESTIONS), help="Only the first N questions.")
    parser.add_argument("--deadline", type=float, default=300.0, help="Turn deadline in seconds.")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: every usable core).")
    args = parser.parse_args()
    begun = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ts-local-bench-") as tmp:
        home = Path(tmp)
        settings, paths = build_installation(home, args.size)
        schema = schema_prompt(paths)
        with local_model_server(settings, threads=args.threads) as endpoint:
            run_questions(args, begun, settings, paths, schema, endpoint)


def run_questions(
    args: argparse.Namespace,
    begun: float,
    settings: Settings,
    paths: dict[str, Path],
    schema: str,
    endpoint: LocalEndpoint,
) -> None:
    from workers.models.llama_server import available_cores

    config = endpoint.settings_for(settings).model_copy(update={"turn_deadline_s": args.deadline})
    store: Store = open_store(config)
    session = ConsoleSession(config, store)
    client = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=args.deadline)
    meta = {
        "size": args.size,
        "model": endpoint.model.name,
        "threads": args.threads or available_cores(),
        "cpus": available_cores(),
        "deadline_s": args.deadline,
        "max_rounds": config.max_rounds,
        "started": time.strftime("%Y-%m-%d %H:%M"),
    }
    rows: list[dict[str, Any]] = []
    try:
        for question in QUESTIONS[: args.limit]:
            expected = expected_row(paths, question)
            ours = tablescout_turn(session, question, expected)
            theirs = baseline_turn(client, schema, paths, question, expected)
            rows.append(
                {
                    "id": question.id,
                    "question": question.text,
                    "expected": expected,
                    "tablescout": asdict(ours),
                    "schema_prompt": asdict(theirs),
                }
            )
            print(
                f"{question.id:2d} tablescout {'✓' if ours.correct else '✗'} {ours.status} {ours.rounds} rounds "
                f"{ours.seconds}s | schema prompt {'✓' if theirs.correct else '✗'} {theirs.seconds}s",
                flush=True,
            )
            write_results(meta | {"elapsed_min": (time.monotonic() - begun) / 60}, rows)
    finally:
        client.close()
        store.close()


if __name__ == "__main__":
    main()
