"""How soon a chat turn shows its status message: from the bot's acknowledgement (the turn stored and its job sent)
to the Slack status post, for the first turn after a worker starts (cold) and for later ones (warm).

A real Celery worker (threads pool) on a private Redis, the embedded metadata store with the analysed sample ERP, the
fake Slack Web API (the worker's real slack_sdk client posts to it) and a scripted Anthropic-compatible model that
answers at once. The cold turn is sent as soon as the worker logs that it is ready.

Run:  python -m bench.first_status [--warm 5]   (writes bench/results/first_status.json)
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

from celery import Celery

from bench.harness import REPO, Timer, current_run, program, write_results
from bench.turn_overhead import build_installation
from core.store.database import open_store
from core.store.repositories import turns as turn_repo
from tests.fakes.model_server import FakeAnthropicServer, Say
from tests.fakes.slack_server import FakeSlack
from tests.redis_server import RedisServer


def start_worker(home: Path, redis_url: str, model: FakeAnthropicServer, slack: FakeSlack, log: Path) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLESCOUT_", "ANTHROPIC_", "SLACK_"))}
    env |= {
        "TABLESCOUT_HOME": str(home),
        "TABLESCOUT_REDIS_URL": redis_url,
        "TABLESCOUT_MODEL": "anthropic:scripted",
        "ANTHROPIC_API_KEY": "bench",
        "ANTHROPIC_BASE_URL": model.url,
        "SLACK_BOT_TOKEN": slack.token,
        "TABLESCOUT_SLACK_API_URL": slack.url,
    }
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--pool=threads", "--concurrency=2"]
    argv += ["--loglevel=info", "--without-gossip", "--without-mingle"]
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def ask(store: Any, client: Celery, slack: FakeSlack, n: int) -> float:
    """Seconds from storing and enqueueing a Slack turn to its status message reaching Slack."""
    posted = len(slack.calls_to("chat.postMessage"))
    with store.transaction() as session:
        conversation = turn_repo.conversation(
            session, platform="slack", workspace_id="T1", channel_id="C_BENCH", thread_id=f"{n}.000100", private=False
        )
        turn_id = turn_repo.create_turn(
            session, conversation.id, user_platform="slack", user_id="U_BENCH", question="How many orders?"
        ).id
    started = time.perf_counter()
    client.send_task("tablescout.turns.run", args=[turn_id])
    until = started + 120
    while len(slack.calls_to("chat.postMessage")) <= posted:
        if time.perf_counter() > until:
            raise SystemExit(f"no status message for turn {turn_id}")
        time.sleep(0.002)
    elapsed = time.perf_counter() - started
    time.sleep(1.5)  # let the answer go out before the next turn
    return elapsed


def main() -> None:
    current_run()
    parser = argparse.ArgumentParser(
        prog=program(), description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--warm", type=int, default=5, help="warm turns after the cold one")
    args = parser.parse_args()
    redis = RedisServer()
    redis.start()
    with tempfile.TemporaryDirectory(prefix="ts-first-status-") as tmp, FakeSlack() as slack:
        home = Path(tmp)
        settings = build_installation(home)
        model = FakeAnthropicServer().start()
        model.script(lambda _exchange: Say("42 orders."))
        log = home / "worker.log"
        worker_start = Timer()
        worker = start_worker(home, redis.url, model, slack, log)
        client = Celery("bench", broker=redis.url)
        store = open_store(settings)
        try:
            while " ready." not in log.read_text(errors="replace"):
                if worker.poll() is not None:
                    raise SystemExit(log.read_text(errors="replace")[-3000:])
                time.sleep(0.05)
            worker_start_s = worker_start.elapsed
            cold = ask(store, client, slack, 0)
            warm = [ask(store, client, slack, n) for n in range(1, args.warm + 1)]
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            store.close()
            model.stop()
            redis.stop()
    report = {
        "benchmark": "first_status",
        "measures": "turn stored and enqueued -> Slack status message posted",
        "worker_start_to_ready_s": round(worker_start_s, 2),
        "cold_first_turn_s": round(cold, 3),
        "warm_turns_s": [round(w, 3) for w in warm],
        "warm_median_s": round(statistics.median(warm), 3),
        "cpu_count": os.cpu_count(),
    }
    write_results("first_status", report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
