"""The embedded store killed mid-turn (issue 30, item 7): the turn is run again and answered, never reported as
lost, and a worker starts the store again by itself. A fresh home on its own embedded store, the real `tablescout
ask` (in this process, or waiting for a real Celery worker with its beat), a fake Anthropic server that SIGKILLs the
store's server while the model "thinks", and the process table checked afterwards."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.model_server import Exchange, FakeModelServer, Say, Step
from tests.redis_server import RedisServer
from tests.store_processes import assert_nothing_left, kill_postmaster, postmasters, wait_until
from tests.support import run_cli
from tests.workers.turns.worker_support import running_worker

pytestmark = pytest.mark.timeout(300)

QUESTION = "Which table holds the orders?"
ANSWER = "ORDERS holds the orders."


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An installation on its own embedded store, one small source analysed."""
    home = tmp_path_factory.mktemp("store-restart")
    with sqlite3.connect(home / "shop.sqlite") as conn:
        conn.execute("CREATE TABLE ORDERS (ORD_NO INTEGER PRIMARY KEY, CUST_NM TEXT, AMT REAL)")
        conn.executemany("INSERT INTO ORDERS VALUES (?, ?, ?)", [(i, f"c{i}", i * 2.5) for i in range(30)])
    assert run_cli(home, "init").returncode == 0
    assert run_cli(home, "source", "add", "shop", f"sqlite:///{home / 'shop.sqlite'}").returncode == 0
    analysed = run_cli(home, "analyze", "shop")
    assert analysed.returncode == 0, analysed.stderr
    yield home
    for server in postmasters(home / "pgdata"):
        server.kill()


def _model_env(model: FakeModelServer) -> dict[str, str]:
    return {
        "TABLESCOUT_MODEL": "anthropic:fake-model",
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": model.url,
    }


def _kills_the_store_once(pgdata: Path, killed: list[int]) -> Callable[[Exchange], Step]:
    def model(exchange: Exchange) -> Step:
        if not killed:
            killed.append(kill_postmaster(pgdata))  # before the reply: the turn's next write finds no server
        return Say(ANSWER)

    return model


def test_a_turn_running_in_the_console_is_run_again_when_the_store_is_killed_under_it(
    home: Path, fake_anthropic: FakeModelServer
) -> None:
    killed: list[int] = []
    fake_anthropic.script(_kills_the_store_once(home / "pgdata", killed))
    proc = run_cli(home, "ask", QUESTION, "--json", env=_model_env(fake_anthropic))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "nothing more was saved" not in proc.stderr
    data = json.loads(proc.stdout)
    assert (data["status"], data["answer"]) == ("answered", ANSWER)
    assert len(killed) == 1
    assert len(fake_anthropic.requests) == 2  # the first attempt's reply found no store; the second was answered
    assert_nothing_left(home / "pgdata")


def test_a_worker_runs_the_turn_again_and_starts_the_killed_store_again_by_itself(
    home: Path, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    pgdata = home / "pgdata"
    killed: list[int] = []
    fake_anthropic.script(_kills_the_store_once(pgdata, killed))
    redis = RedisServer()
    redis.start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLESCOUT_", "ANTHROPIC_", "OPENAI_"))}
        env |= _model_env(fake_anthropic) | {
            "TABLESCOUT_HOME": str(home),
            "TABLESCOUT_REDIS_URL": f"{redis.url}/0",
            "TABLESCOUT_SWEEP_INTERVAL_S": "1",
        }
        log = tmp_path / "worker.log"
        with running_worker(env, log, beat=tmp_path / "beat-schedule") as worker:
            proc = run_cli(home, "ask", QUESTION, "--json", env=env)
            assert proc.returncode == 0, proc.stderr[-3000:] + log.read_text()[-3000:]
            data = json.loads(proc.stdout)
            assert (data["status"], data["answer"]) == ("answered", ANSWER)
            assert len(killed) == 1

            # No command runs now: the worker's next sweep starts the store it holds again.
            again = kill_postmaster(pgdata)
            wait_until(lambda: [p.pid for p in postmasters(pgdata)] not in ([], [again]), 30, "the store to start")
            assert worker.process.poll() is None
        text = log.read_text()
        assert "raised unexpected" not in text, text[-3000:]  # no job failed with a traceback meanwhile
        assert "starting it again" in text
    finally:
        redis.close()
    assert_nothing_left(pgdata)  # the worker, stopped with SIGTERM, closed its handle: the server stopped
