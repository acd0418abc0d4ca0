"""Turn overhead outside model time (SPEC §11: queue to first model call p95 ≤ 150 ms).

One worker host: a real Celery worker (threads pool) on Redis, the embedded metadata store with the analysed and
indexed sample ERP, and a scripted model server of fixed latency speaking the Anthropic Messages API, so the real
SDK runs. Each turn does what a real one does: search_tables → open_table_card → run_sql → answer (4 model calls).
For 1, 4 and 16 concurrent turns (closed loop: each of N users asks again as soon as their answer arrives) it
measures, from the stored timestamps of every turn:
- queue → first model call: from the turn's row being stored (then enqueued) to the first model request;
- time outside the model: the turn's wall time minus its model calls' fixed latency;
- turns per second.

Run:  python bench/turn_overhead.py [--latency 0.2 1.0] [--turns 48]   (writes bench/results/turn_overhead.json and .md)
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import redis  # noqa: E402
from celery import Celery  # noqa: E402
from sqlalchemy import select  # noqa: E402

from catalog.analysis import AnalysisOptions  # noqa: E402
from catalog.registration import add_source  # noqa: E402
from catalog.sample_erp import build_sqlite  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store import migrate  # noqa: E402
from core.store.database import open_store  # noqa: E402
from core.store.models import Turn  # noqa: E402
from core.store.repositories import turns as turn_repo  # noqa: E402
from tests.fakes.model_server import Call, Exchange, FakeAnthropicServer, Say, Step  # noqa: E402
from workers.catalog_refresh import refresh_source  # noqa: E402

RESULTS = REPO / "bench" / "results"
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


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


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


def start_worker(home: Path, server: FakeAnthropicServer, concurrency: int, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLESCOUT_", "ANTHROPIC_"))}
    env |= {
        "TABLESCOUT_HOME": str(home),
        "TABLESCOUT_REDIS_URL": REDIS_URL,
        "TABLESCOUT_MODEL": "anthropic:scripted",
        "ANTHROPIC_API_KEY": "bench",
        "ANTHROPIC_BASE_URL": server.url,
    }
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--pool=threads"]
    argv += [f"--concurrency={concurrency}", "--loglevel=warning", "--without-gossip", "--without-mingle"]
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
    store.close()
    queue = [(first - queued).total_seconds() * 1000 for queued, first, _ in timed if first is not None]
    done = [(queued, finished) for queued, _, finished in timed if finished is not None]
    outside = [((finished - queued).total_seconds() - MODEL_CALLS * latency) * 1000 for queued, finished in done]
    span = (max(f for _, f in done) - min(q for q, _ in done)).total_seconds()
    return {
        "turns": len(ids),
        "statuses": statuses,
        "queue_to_first_model_call_ms": {
            "p50": round(percentile(queue, 0.5), 1),
            "p95": round(percentile(queue, 0.95), 1),
        },
        "outside_model_ms": {"p50": round(percentile(outside, 0.5), 1), "p95": round(percentile(outside, 0.95), 1)},
        "turns_per_second": round(len(ids) / span, 2),
        "mean_queue_ms": round(statistics.fmean(queue), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--latency", type=float, nargs="+", default=[0.2, 1.0], help="seconds per model call (fixed), one run each"
    )
    parser.add_argument("--turns", type=int, default=48, help="turns per concurrency level")
    args = parser.parse_args()
    levels = (1, 4, 16)
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="ts-turn-bench-") as tmp:
        home = Path(tmp)
        started = time.perf_counter()
        settings = build_installation(home)
        print(f"sample analysed and indexed in {time.perf_counter() - started:.1f} s", flush=True)
        server = FakeAnthropicServer().start()
        server.script(script)
        worker = start_worker(home, server, max(levels), home / "worker.log")
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
            worker.terminate()
            worker.wait(timeout=30)
            store.close()
            server.stop()
            client.flushdb()
    report = {
        "benchmark": "turn_overhead",
        "model_calls_per_turn": MODEL_CALLS,
        "load": "closed loop: N users, each asking again when answered",
        "worker": f"1 Celery worker, threads pool, concurrency {max(levels)}; os.cpu_count()={os.cpu_count()}",
        "target": "queue to first model call p95 <= 150 ms",
        "by_model_latency_s": runs,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "turn_overhead.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        "# Turn overhead outside model time",
        "",
        f"Scripted model of fixed latency, {MODEL_CALLS} calls per turn (search → card → SQL → answer); one worker "
        f"host ({os.cpu_count()} CPUs), closed loop (N users each asking again when answered); "
        "target queue → first model call p95 ≤ 150 ms.",
        "",
        "| model latency | concurrent turns | turns | queue→first model call p50 / p95 ms "
        "| outside model p50 / p95 ms | turns/s |",
        "|---|---|---|---|---|---|",
    ]
    for latency, results in runs.items():
        for name, row in results.items():
            q, o = row["queue_to_first_model_call_ms"], row["outside_model_ms"]
            figures = f"{q['p50']} / {q['p95']} | {o['p50']} / {o['p95']} | {row['turns_per_second']}"
            lines.append(f"| {float(latency) * 1000:.0f} ms | {name} | {row['turns']} | {figures} |")
    (RESULTS / "turn_overhead.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
