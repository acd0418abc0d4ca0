"""Turn overhead outside model time (SPEC §11: queue to first model call p95 ≤ 150 ms).

One worker host: a real Celery worker (threads pool) on Redis, the embedded metadata store with the analysed and
indexed sample ERP, and a scripted model server of fixed latency speaking the Anthropic Messages API, so the real
SDK runs. Each turn does what a real one does: search_tables → open_table_card → run_sql → answer (4 model calls).
For 1, 4 and 16 concurrent turns (closed loop: each of N users asks again as soon as their answer arrives) it
measures, from the stored timestamps of every turn:
- queue → first model call: from the turn's row being stored (then enqueued) to the first model request;
- time outside the model: the turn's wall time minus its model calls' fixed latency;
- turns per second.

With `--processes N` the host runs N worker processes (threads pool each, the concurrency split between them):
one process runs Python on one core at a time (the GIL), so on 2 cores a second process is what lets the turns'
own work use both.

Run:  python -m bench.turn_overhead [--latency 0.2 1.0] [--turns 48] [--processes 1] [--results NAME]
(writes bench/results/turn_overhead.json and .md, or NAME.json and .md)
Needs Redis on 127.0.0.1:6379 (database 12 is flushed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
from celery import Celery
from sqlalchemy import select

from bench.harness import REPO, Timer, current_run, md_table, p50_p95, program, write_results
from catalog.analysis import AnalysisOptions
from catalog.registration import add_source
from catalog.sample_erp import build_sqlite
from core.config.settings import Settings
from core.store import migrate
from core.store.database import open_store
from core.store.models import Turn
from core.store.repositories import turns as turn_repo
from tests.fakes.model_server import Call, Exchange, FakeAnthropicServer, Say, Step
from workers.catalog_refresh import refresh_source

REDIS_URL = "redis://127.0.0.1:6379/12"
SQL = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01'"
MODEL_CALLS = 4


def script(exchange: Exchange) -> Step:
    if exchange.round == 1:
        return Call("search_tables", {"question": exchange.user_text.splitlines()[-1]})
    if exchange.round == 2:
        return Call("open_table_card", {"database": "erp", "table": "ORD_MST"})
    if exchange.round == 3:
        return Call("run_sql", {"database": "erp", "sql": SQL})
    return Say("done: " + exchange.tool_results.get("run_sql", "").splitlines()[-1])


def build_installation(home: Path) -> Settings:
    settings = Settings(home=home)
    store = open_store(settings)
    migrate.upgrade(store.engine)
    paths = build_sqlite(home / "sample")
    add_source(settings, store, "erp", f"sqlite:///{paths['erp']}", [])
    settings = Settings(home=home)
    report = refresh_source(settings, store, "erp", AnalysisOptions())
    if report.analysis.error:
        raise SystemExit(f"analysis failed: {report.analysis.error}")
    store.close()
    return settings


def start_worker(
    home: Path, server: FakeAnthropicServer, concurrency: int, log: Path, name: str
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLESCOUT_", "ANTHROPIC_"))}
    env |= {
        "TABLESCOUT_HOME": str(home),
        "TABLESCOUT_REDIS_URL": REDIS_URL,
        "TABLESCOUT_MODEL": "anthropic:scripted",
        "ANTHROPIC_API_KEY": "bench",
        "ANTHROPIC_BASE_URL": server.url,
    }
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--pool=threads"]
    argv += [f"--concurrency={concurrency}", "--loglevel=warning", "--without-gossip", "--without-mingle", "-n", name]
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def closed_loop(store: Any, client: Celery, concurrency: int, total: int, label: str) -> list[int]:
    """`concurrency` users, each asking again as soon as their previous turn is answered, until `total` turns ran."""
    with store.transaction() as session:
        conversation_id = turn_repo.conversation(session, platform="console", channel_id="bench", thread_id=label).id

    def submit(n: int) -> int:
        with store.transaction() as session:
            turn_id = turn_repo.create_turn(
                session,
                conversation_id,
                user_platform="operator",
                user_id="bench",
                question=f"How many orders were placed in 2024? ({label}-{n})",
            ).id
        client.send_task("tablescout.turns.run", args=[turn_id])
        return turn_id

    submitted = [submit(n) for n in range(min(concurrency, total))]
    in_flight = set(submitted)
    deadline = time.monotonic() + 600
    while in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
        with store.transaction() as session:
            done = session.scalars(
                select(Turn.id).where(Turn.id.in_(in_flight), Turn.status.in_(turn_repo.FINISHED))
            ).all()
        for turn_id in done:
            in_flight.discard(turn_id)
            if len(submitted) < total:
                submitted.append(submit(len(submitted)))
                in_flight.add(submitted[-1])
    if in_flight:
        raise SystemExit(f"turns of {label} did not finish")
    return submitted


def measure(settings: Settings, ids: list[int], latency: float) -> dict[str, Any]:
    store = open_store(settings)
    with store.transaction() as session:
        turns = session.query(Turn).filter(Turn.id.in_(ids)).all()
        statuses = sorted({t.status for t in turns})
        timed = [(t.queued_at, t.first_model_call_at, t.finished_at) for t in turns]
        claimed = [(t.queued_at, t.started_at, t.first_model_call_at) for t in turns]
    store.close()
    queue = [(first - queued).total_seconds() * 1000 for queued, first, _ in timed if first is not None]
    # Where the queue time goes: until the job claims its turn (broker, a free worker thread, the status message),
    # then from the claim to the first model request (reading what the first model call needs).
    to_claim = [(s - q).total_seconds() * 1000 for q, s, f in claimed if s is not None and f is not None]
    to_call = [(f - s).total_seconds() * 1000 for q, s, f in claimed if s is not None and f is not None]
    done = [(queued, finished) for queued, _, finished in timed if finished is not None]
    outside = [((finished - queued).total_seconds() - MODEL_CALLS * latency) * 1000 for queued, finished in done]
    span = (max(f for _, f in done) - min(q for q, _ in done)).total_seconds()
    return {
        "turns": len(ids),
        "statuses": statuses,
        "queue_to_first_model_call_ms": p50_p95(queue),
        "queue_to_claim_ms": p50_p95(to_claim),
        "claim_to_first_model_call_ms": p50_p95(to_call),
        "outside_model_ms": p50_p95(outside),
        "turns_per_second": round(len(ids) / span, 2),
        "mean_queue_ms": round(statistics.fmean(queue), 1),
    }


def profile(settings: Settings, turns: int) -> dict[str, Any]:
    """Statements sent to the store and CPU time of the turn's own thread, per phase, for `turns` turns run one at a
    time in this process (the same job code a worker runs, with a model that answers at once)."""
    import threading

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from workers import runtime
    from workers.tasks.turns import run_turn_job

    me = threading.get_ident()
    clock = time.pthread_getcpuclockid(me)
    sent: list[int] = [0]
    marks: list[tuple[int, int, float]] = []

    def seen(*_: Any) -> None:
        if threading.get_ident() == me:
            sent[0] += 1

    def scripted(exchange: Exchange) -> Step:
        marks.append((exchange.round, sent[0], time.clock_gettime(clock)))
        return script(exchange)

    server = FakeAnthropicServer().start()
    server.script(scripted)
    saved = {
        k: os.environ.get(k) for k in ("TABLESCOUT_HOME", "TABLESCOUT_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    }
    os.environ.update(
        {
            "TABLESCOUT_HOME": str(settings.home),
            "TABLESCOUT_MODEL": "anthropic:scripted",
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": server.url,
        }
    )
    event.listen(Engine, "before_cursor_execute", seen)
    store = open_store(settings)
    phases: dict[str, list[tuple[int, float]]] = {}
    try:
        for n in range(turns + 2):  # the first two load the encoders and open the engines
            with store.transaction() as session:
                conversation_id = turn_repo.conversation(
                    session, platform="console", channel_id="profile", thread_id=f"p{n}"
                ).id
                turn_id = turn_repo.create_turn(
                    session, conversation_id, user_platform="operator", user_id="bench", question=f"Orders in 2024? {n}"
                ).id
            marks.clear()
            sent[0] = 0
            cpu_start = time.clock_gettime(clock)
            run_turn_job(turn_id)
            end = (0, sent[0], time.clock_gettime(clock))
            if n < 2:
                continue
            previous = (0, 0, cpu_start)
            for mark in [*marks, end]:
                name = (
                    "until the first model call"
                    if mark[0] == 1
                    else (
                        f"round {mark[0] - 1} (after model call {mark[0] - 1})" if mark[0] else "last round and finish"
                    )
                )
                phases.setdefault(name, []).append((mark[1] - previous[1], (mark[2] - previous[2]) * 1000))
                previous = mark
            phases.setdefault("whole turn", []).append((end[1], (end[2] - cpu_start) * 1000))
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
        store.close()
        runtime.close()
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return {
        name: {
            "statements": round(statistics.fmean(c for c, _ in values), 1),
            "cpu_ms_p50": round(statistics.median(m for _, m in values), 1),
        }
        for name, values in phases.items()
    }


def main() -> None:
    current_run()
    parser = argparse.ArgumentParser(
        prog=program(), description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--latency", type=float, nargs="+", default=[0.2, 1.0], help="seconds per model call (fixed), one run each"
    )
    parser.add_argument("--turns", type=int, default=48, help="turns per concurrency level")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 4, 16], help="concurrent turns, one run each")
    parser.add_argument("--profile-turns", type=int, default=10, help="turns run one at a time for the profile")
    parser.add_argument("--processes", type=int, default=1, help="worker processes, the concurrency split between them")
    parser.add_argument("--note", default="", help="a line for the results (e.g. what else ran on the machine)")
    parser.add_argument("--results", default="turn_overhead", help="results file name without extension")
    args = parser.parse_args()
    levels = tuple(args.levels)
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="ts-turn-bench-") as tmp:
        home = Path(tmp)
        with Timer() as setup:
            settings = build_installation(home)
        print(f"sample analysed and indexed in {setup.seconds:.1f} s", flush=True)
        phases = profile(settings, args.profile_turns)
        print(json.dumps(phases, indent=2), flush=True)
        server = FakeAnthropicServer().start()
        server.script(script)
        per_process = -(-max(levels) // args.processes)
        workers = [
            start_worker(home, server, per_process, home / f"worker-{n}.log", f"bench{n}@%h")
            for n in range(args.processes)
        ]
        celery_client = Celery("bench", broker=REDIS_URL)
        store = open_store(settings)
        try:
            closed_loop(store, celery_client, 2, 4, "warm-up")  # loads the embedding model, opens the engines
            for latency in args.latency:
                server.latency_s = latency
                results: dict[str, Any] = {}
                for level in levels:
                    label = f"l{latency}-c{level}"
                    ids = closed_loop(store, celery_client, level, max(args.turns, 2 * level), label)
                    results[str(level)] = measure(settings, ids, latency)
                    print(latency, level, results[str(level)], flush=True)
                runs[str(latency)] = results
        finally:
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.wait(timeout=30)
            store.close()
            server.stop()
            client.flushdb()
    report = {
        "benchmark": "turn_overhead",
        "model_calls_per_turn": MODEL_CALLS,
        "load": "closed loop: N users, each asking again when answered",
        "worker": (
            f"{args.processes} Celery worker process(es), threads pool, concurrency {max(levels)} in all; "
            f"os.cpu_count()={os.cpu_count()}"
        ),
        "target": "queue to first model call p95 <= 150 ms",
        "by_model_latency_s": runs,
        "note": args.note,
        "store_statements_and_cpu_per_phase": phases,
    }
    markdown = render(report, args.profile_turns)
    write_results(args.results, report, markdown)
    print(markdown)


def render(report: dict[str, Any], profile_turns: int) -> str:
    runs: dict[str, dict[str, Any]] = report["by_model_latency_s"]
    lines = [
        "# Turn overhead outside model time",
        "",
        f"Scripted model of fixed latency, {MODEL_CALLS} calls per turn (search → card → SQL → answer); one worker "
        f"host ({os.cpu_count()} CPUs), closed loop (N users each asking again when answered); "
        f"target queue → first model call p95 ≤ 150 ms. Worker: {report['worker']}.",
        "",
    ]
    if report["note"]:
        lines[2:2] = ["", report["note"]]
    overhead = []
    for latency, results in runs.items():
        for name, row in results.items():
            q, o = row["queue_to_first_model_call_ms"], row["outside_model_ms"]
            overhead.append(
                [
                    f"{float(latency) * 1000:.0f} ms",
                    name,
                    row["turns"],
                    f"{q['p50']} / {q['p95']}",
                    f"{o['p50']} / {o['p95']}",
                    row["turns_per_second"],
                ]
            )
    header = ["model latency", "concurrent turns", "turns", "queue→first model call p50 / p95 ms"]
    lines += md_table([*header, "outside model p50 / p95 ms", "turns/s"], overhead)
    lines += [
        "",
        "Queue → first model call split at the claim (p50 / p95 ms): until a worker thread claims the turn, then "
        "reading what the first model call needs.",
        "",
    ]
    split = []
    for latency, results in runs.items():
        for name, row in results.items():
            a, b = row["queue_to_claim_ms"], row["claim_to_first_model_call_ms"]
            split.append(
                [f"{float(latency) * 1000:.0f} ms", name, f"{a['p50']} / {a['p95']}", f"{b['p50']} / {b['p95']}"]
            )
    lines += md_table(["model latency", "concurrent turns", "queue → claim", "claim → first model call"], split)
    lines += [
        "",
        f"Store statements (each one round trip) and CPU of the turn's thread, {profile_turns} turns one at a "
        "time in one process (transaction BEGIN/COMMIT and the pool's connection check come on top):",
        "",
    ]
    phases = report["store_statements_and_cpu_per_phase"]
    rows = [[name, row["statements"], row["cpu_ms_p50"]] for name, row in phases.items()]
    lines += md_table(["phase", "statements", "CPU p50 ms"], rows)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
