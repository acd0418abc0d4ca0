"""A real Celery worker process on Redis for turn tests, and a client that enqueues turn jobs by task name."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from celery import Celery

from tests.fakes.model_server import FakeModelServer
from tests.redis_server import redis_url
from tests.support import REPO
from tests.turn_world import TurnWorld, model_settings

REDIS_URL = redis_url(11)
TURN_TASK = "tablescout.turns.run"


def worker_environment(world: TurnWorld, server: FakeModelServer, **settings: Any) -> dict[str, str]:
    configured = model_settings(server, world.settings)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESCOUT_")}
    env.update(
        {
            "TABLESCOUT_HOME": str(configured.home),
            "TABLESCOUT_DATABASE_URL": configured.database_url.get_secret_value(),  # type: ignore[union-attr]
            "TABLESCOUT_REDIS_URL": REDIS_URL,
            "TABLESCOUT_MODEL": configured.model or "",
            "TABLESCOUT_MULTILINGUAL_VECTORS": os.environ.get("TABLESCOUT_MULTILINGUAL_VECTORS", "true"),
        }
    )
    if configured.anthropic_base_url:
        env |= {"ANTHROPIC_BASE_URL": configured.anthropic_base_url, "ANTHROPIC_API_KEY": "test-key"}
    else:
        env |= {"OPENAI_BASE_URL": configured.openai_base_url or "", "OPENAI_API_KEY": "test-key"}
    env.update({f"TABLESCOUT_{k.upper()}": str(v) for k, v in settings.items()})
    return env


def flush_broker() -> None:
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    client.close()


class Worker:
    """A `celery worker` process; with `beat`, it also runs the beat schedule (the sweep), its state file there."""

    def __init__(self, env: dict[str, str], log: Path, concurrency: int = 2, beat: Path | None = None) -> None:
        self.log = log
        self.handle = log.open("ab")
        schedule = ["--beat", f"--schedule={beat}"] if beat is not None else []
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "workers.app",
                "worker",
                "--pool=threads",
                f"--concurrency={concurrency}",
                "--loglevel=info",
                "--without-gossip",
                "--without-mingle",
                f"--hostname=test-{time.monotonic_ns()}@%h",
                *schedule,
            ],
            cwd=REPO,
            env=env,
            stdout=self.handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: `kill` takes the beat's child process with it
        )

    def wait_ready(self, timeout: float = 60) -> None:
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            if "ready." in self.log.read_text(errors="replace"):
                return
            if self.process.poll() is not None:
                raise AssertionError(f"the worker exited: {self.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        raise AssertionError(f"the worker did not start: {self.log.read_text(errors='replace')[-3000:]}")

    def kill(self) -> None:
        """SIGKILL to the worker and its children: no shutdown, no acknowledgement, exactly as when a machine dies."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.handle.close()


@contextmanager
def running_worker(env: dict[str, str], log: Path, concurrency: int = 2, beat: Path | None = None) -> Iterator[Worker]:
    worker = Worker(env, log, concurrency, beat)
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


def enqueue(turn_id: int, broker: str = REDIS_URL) -> None:
    client = Celery("tablescout-test-client", broker=broker)
    client.conf.broker_connection_retry_on_startup = True
    client.send_task(TURN_TASK, args=[turn_id])
    client.close()


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
