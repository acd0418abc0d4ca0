"""A running Celery worker follows edits of tablescout.yaml: a table revoked there is refused on the next turn,
without a restart, and an invalid edit keeps the last valid configuration and is reported by the health probe."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.fakes.model_server import Call, Exchange, FakeModelServer, Say, Step
from tests.support import REPO
from tests.turn_world import TurnWorld
from tests.workers.turns.worker_support import (
    REDIS_URL,
    Worker,
    enqueue,
    flush_broker,
    running_worker,
    wait_until,
    worker_environment,
)

pytestmark = pytest.mark.timeout(400)

EMPLOYEES = "SELECT COUNT(*) FROM EMP_MST"
OPEN = """\
roles:
  staff:
    grants:
      - database: erp
default_role: staff
"""
REVOKED = OPEN.replace("      - database: erp\n", '      - database: erp\n        deny: ["EMP_*"]\n')
#: The revocation undone and a typo added: not valid, so it must not take effect.
INVALID = OPEN.replace("      - database: erp\n", '      - database: erp\n        alow: ["*"]\n')


def _query_employees(exchange: Exchange) -> Step:
    if exchange.round == 1:
        return Call("run_sql", {"database": "erp", "sql": EMPLOYEES})
    return Say(f"run_sql said: {exchange.tool_results['run_sql']}")


def _write(path: Path, sources: object, roles: str) -> None:
    with path.open("w", encoding="utf-8") as handle:
        YAML().dump({"sources": sources}, handle)
        handle.write(roles)


def _node(worker: Worker) -> str:
    hostname = next(a for a in worker.process.args if str(a).startswith("--hostname="))  # type: ignore[union-attr]
    return str(hostname).removeprefix("--hostname=").replace("%h", socket.gethostname())


def _probe(node: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "tablescout", "health", "worker", "--node", node, "--timeout", "10"]
    return subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)


def test_a_revoked_table_is_refused_on_the_next_turn_without_a_restart(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    sources = YAML(typ="safe").load(turn_world.settings.config_path.read_text())["sources"]
    config = tmp_path / "tablescout.yaml"
    _write(config, sources, OPEN)
    fake_anthropic.script(_query_employees)
    flush_broker()
    env = worker_environment(turn_world, fake_anthropic, config=config)
    log = tmp_path / "worker.log"
    employees = turn_world.erp_scalar(EMPLOYEES)

    def ask(thread: str) -> dict[str, object]:
        turn_id = turn_world.submit("How many employees do we have?", user="U_GUEST", thread=thread)
        enqueue(turn_id)
        wait_until(lambda: turn_world.turn(turn_id)["status"] != "queued", 60, "the turn to start")
        wait_until(lambda: turn_world.turn(turn_id)["status"] != "running", 60, "the answer")
        return turn_world.turn(turn_id)

    with running_worker(env, log) as worker:
        before = ask("T_RELOAD_OPEN")
        _write(config, sources, REVOKED)
        revoked = ask("T_RELOAD_REVOKED")
        _write(config, sources, INVALID)
        kept = ask("T_RELOAD_INVALID")
        probe = _probe(_node(worker), {**env, "TABLESCOUT_REDIS_URL": REDIS_URL, "COLUMNS": "200"})
        worker_log = log.read_text(errors="replace")
    assert before["status"] == "answered"
    assert before["answer"] == f"run_sql said: COUNT(*)\n{employees}\n(1 row)"
    assert revoked["answer"] == "run_sql said: no permission: you may not read table EMP_MST"
    assert kept["answer"] == revoked["answer"]  # the last valid configuration: the denial holds
    assert "alow: unknown key" in worker_log
    assert "stays in use until it is fixed" in worker_log
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith(f"worker degraded: {_node(worker)} answered, but the configuration loaded at ")
    assert "alow: unknown key" in probe.stdout
