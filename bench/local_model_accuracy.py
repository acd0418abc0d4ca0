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

Besides the thirty, the sample ERP set holds the questions a new user tripped over (the issue's six, the README's and
the demo's own), among them a Korean one and a follow-up asked after an earlier question in the same conversation.
Spider questions are drawn by a fixed hash, or at random with `--seed` (the seed is in the results); the hash
splits them into a tuning half and a held-out half either way. Each attempt records the tokens of every model call,
the seconds spent in search, model calls, SQL and the answer checks, what the checks found, the doubt the answer
stated, and for a wrong answer the error table's row (wrong database, table, join, column, aggregation or filter,
SQL error).

Run:  python -m bench.local_model_accuracy [--size 0.5b|1.5b] [--limit N] [--erp-ids 31,35] [--spider 150
      --seed 34] [--threads 1] [--deadline 300]
(writes bench/results/local_model_accuracy_<size>.json and .md after every question, so a partial run keeps its
figures).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import openai
import sqlglot
from sqlglot import exp

from bench.harness import current_run, program
from bench.local_model_questions import (
    QUESTIONS,
    ROW_CAP,
    Attempt,
    Item,
    erp_items,
    run_readonly,
    spider_items,
)
from bench.local_model_report import SYSTEMS, error_kind, write_report
from bench.local_model_setup import approve_spider_examples, delete_examples, erp_installation, spider_installation
from core.config.settings import Settings
from core.store.database import Store, open_store
from core.store.models import Turn
from tablescout.cli.model_cmd import LocalEndpoint, local_model_server
from tablescout.cli.turn_session import ConsoleSession
from workers.models import local_gguf

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
    if item.before:  # a follow-up: the earlier question first, in the same conversation, not timed or scored
        session.run(session.submit(item.before), lambda _status: None)
    started = time.monotonic()
    turn_id = session.submit(item.text)
    result = session.run(turn_id, lambda _status: None).to_json()
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
        sql=[_sql_entry(r) for r in result["sql"]],
    )
    attempt.tables = [str(t) for t in guided.get("tables", [])]
    attempt.pruned = str(guided.get("pruned") or "")
    attempt.output_tokens = int(usage.get("output_tokens", 0))
    attempt.calls = [[int(n) for n in pair] for pair in guided.get("tokens", [])]
    attempt.ms = {str(k): float(v) for k, v in (guided.get("ms") or {}).items()}
    attempt.checks = [str(k) for k in guided.get("checks", [])]
    attempt.doubt = str(guided.get("doubt") or "")
    attempt.candidates = {str(k): int(v) for k, v in (guided.get("candidates") or {}).items()}
    if not correct:
        attempt.step = _failing_step(item, attempt, last, guided)
        attempt.error_kind = error_kind(item, last)
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
        error_kind="" if correct else error_kind(item, None if error else {"database": database, "sql": sql}),
        sql=[{"database": database, "sql": sql, "error": error, "rows": rows[:3]}],
    )


def schema_text(name: str, path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        ddl = [row[0] for row in connection.execute("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return f"Database {name} (SQLite):\n" + ";\n".join(ddl) + ";"


def main() -> None:
    current_run()
    parser = argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(local_gguf.SOURCES), default=local_gguf.DEFAULT_SIZE)
    parser.add_argument("--limit", type=int, default=len(QUESTIONS), help="Only the first N ERP questions.")
    parser.add_argument("--spider", type=int, default=24, help="Spider dev questions (fixed hash); 0: none.")
    parser.add_argument("--seed", type=int, default=None, help="Draw the Spider questions at random with this seed.")
    parser.add_argument("--erp-ids", default="", help="Only these ERP question numbers (comma-separated).")
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
        if name == "erp":
            wanted = {int(n) for n in args.erp_ids.split(",") if n.strip()}
            items += [i for i in erp_items(paths, args.limit) if not wanted or i.id in wanted]
        else:
            items += spider_items(paths, args.spider, args.seed)
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
        "spider_seed": args.seed,
        "load_start": os.getloadavg(),
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
            now = {"elapsed_min": (time.monotonic() - begun) / 60, "partial": partial, "load_now": os.getloadavg()}
            write_report(meta | now, items, results)
    finally:
        if approved:
            delete_examples(stores["spider"], approved)
        client.close()
        for store in stores.values():
            store.close()


if __name__ == "__main__":
    main()
