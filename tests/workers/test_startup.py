"""A real Celery worker loads the turns' encoders and model client when it starts, before it takes a job, and
`tablescout health worker` says it is ready only once they are loaded (and why not when loading failed)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.support import REPO
from tests.turn_world import TurnWorld
from tests.workers.turns.worker_support import flush_broker, running_worker, worker_environment

pytestmark = pytest.mark.timeout(300)


def _node(log: Path) -> str:
    found = re.search(r"(test-\d+@\S+) v\d", log.read_text(errors="replace"))
    assert found is not None, log.read_text(errors="replace")[-2000:]
    return found.group(1)


def _health(env: dict[str, str], node: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tablescout", "health", "worker", "--node", node, "--timeout", "5"],
        env=env | {"COLUMNS": "300"},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_worker_loads_the_encoders_before_it_takes_jobs(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    flush_broker()
    env = worker_environment(turn_world, fake_anthropic)
    log = tmp_path / "worker.log"
    with running_worker(env, log):
        text = log.read_text(errors="replace")
        loaded = text.find("turns ready: encoders and model client loaded")
        assert loaded != -1, text[-3000:]
        assert text.find("loading the encoders") < loaded < text.rfind(" ready.")  # loaded before consuming
        probe = _health(env, _node(log))
    assert probe.returncode == 0, probe.stderr
    assert '"turns": {"state": "ready"' in probe.stdout


def test_health_says_a_worker_whose_encoders_failed_to_load_is_not_ready(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    flush_broker()
    env = worker_environment(turn_world, fake_anthropic, embedding_model=str(tmp_path / "no-such-model"))
    log = tmp_path / "worker.log"
    with running_worker(env, log):
        probe = _health(env, _node(log))
    assert probe.returncode == 1
    assert "is not ready to run turns (failed)" in probe.stderr
    assert "no-such-model" in probe.stderr
