"""Turns through a real Celery worker on Redis: answers, a worker killed mid-turn, a job delivered twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.store.models import OutboxMessage, Round
from tests.fakes.model_server import Call, Exchange, FakeModelServer, Say, Slow, Step
from tests.support import REPO
from tests.turn_world import TurnWorld
from tests.workers.turns.scripts import ORDERS_2024, search_card_sql_answer
from tests.workers.turns.worker_support import enqueue, flush_broker, running_worker, wait_until, worker_environment

pytestmark = pytest.mark.timeout(400)


def _finished(world: TurnWorld, turn_id: int) -> bool:
    return world.turn(turn_id)["status"] in ("answered", "partial", "failed")


def _answers_recorded(world: TurnWorld, turn_id: int) -> int:
    with world.installation.store.transaction() as session:
        return int(
            session.scalar(select(func.count()).select_from(OutboxMessage).where(OutboxMessage.turn_id == turn_id)) or 0
        )


@pytest.mark.parametrize("engine", ["sqlite", pytest.param("mariadb", marks=pytest.mark.mariadb)])
def test_a_worker_answers_with_the_live_tables_number(
    engine: str, request: pytest.FixtureRequest, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    world: TurnWorld = request.getfixturevalue("turn_world" if engine == "sqlite" else "mariadb_turn_world")
    question = "How many orders were placed in 2024?"
    fake_anthropic.script(
        search_card_sql_answer(question, lambda table: ORDERS_2024.replace("ORD_MST", table), "{value} orders.")
    )
    flush_broker()
    turn_id = world.submit(question, thread=f"T_WORKER_{engine}")
    with running_worker(worker_environment(world, fake_anthropic), tmp_path / "worker.log"):
        enqueue(turn_id)
        wait_until(lambda: _finished(world, turn_id), 90, "the answer")
    stored = world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert stored["answer"] == f"{world.erp_scalar(ORDERS_2024)} orders."
    assert stored["tables_used"] == ["erp.ORD_MST"]
    assert _answers_recorded(world, turn_id) == 1


def test_a_worker_killed_mid_turn_is_replaced_and_one_answer_is_recorded(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    def model(exchange: Exchange) -> Step:
        if exchange.request_number == 1:
            return Call("list_tables", {"database": "erp", "pattern": "ORD*"})
        if exchange.request_number == 2:
            return Slow(60, Say("this reply never arrives: the worker is killed while waiting for it"))
        return Say("ORD_MST holds the orders.")

    fake_anthropic.script(model)
    flush_broker()
    # Short limits so the broker redelivers soon: deadline 5 s → hard limit 35 s → visibility timeout 46 s, and
    # the broker looks for jobs past it every 10 s (workers.app.restore_throttle; kombu alone: every 100 s).
    env = worker_environment(turn_world, fake_anthropic, turn_deadline_s=5, worker_visibility_timeout_s=46)
    turn_id = turn_world.submit("Which table holds orders?", thread="T_KILL")
    with running_worker(env, tmp_path / "first.log") as first:
        enqueue(turn_id)
        wait_until(lambda: len(fake_anthropic.requests) >= 2, 60, "the second model call")
        first.kill()
    assert turn_world.turn(turn_id)["status"] == "running"
    with running_worker(env, tmp_path / "second.log"):
        wait_until(lambda: _finished(turn_world, turn_id), 100, "the redelivered turn")
    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered"
    assert stored["answer"] == "ORD_MST holds the orders."
    assert stored["attempts"] == 2
    assert _answers_recorded(turn_world, turn_id) == 1
    with turn_world.installation.store.transaction() as session:
        ordinals = session.scalars(select(Round.ordinal).where(Round.turn_id == turn_id).order_by(Round.ordinal)).all()
    assert ordinals == [1, 2]  # the killed attempt's first round, then the second attempt's answer


def test_a_job_delivered_twice_runs_the_turn_once(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    fake_anthropic.script(
        lambda exchange: Slow(3, Say("Twelve products are discontinued.")) if exchange.round == 1 else None
    )
    flush_broker()
    turn_id = turn_world.submit("How many products are discontinued?", thread="T_TWICE")
    env = worker_environment(turn_world, fake_anthropic, turn_deadline_s=20, worker_visibility_timeout_s=70)
    with running_worker(env, tmp_path / "worker.log", concurrency=4):
        enqueue(turn_id)
        enqueue(turn_id)
        wait_until(lambda: _finished(turn_world, turn_id), 60, "the answer")
        # The second job found the lease taken and looks again after it ends; that look must change nothing.
        wait_until(lambda: "looking again" in (tmp_path / "worker.log").read_text(), 10, "the second job")
    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered"
    assert stored["attempts"] == 1
    assert len(fake_anthropic.requests) == 1
    assert _answers_recorded(turn_world, turn_id) == 1


def test_ask_hands_the_turn_to_a_worker_when_redis_is_set(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    fake_anthropic.script([Call("list_tables", {"database": "erp", "pattern": "ORD*"}), Say("ORD_MST holds orders.")])
    flush_broker()
    env = worker_environment(turn_world, fake_anthropic)
    with running_worker(env, tmp_path / "worker.log"):
        proc = subprocess.run(
            [sys.executable, "-m", "tablescout", "ask", "Which table holds orders?", "--json"],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    assert data["status"] == "answered"
    assert data["answer"] == "ORD_MST holds orders."
    assert data["rounds"] == 2
    assert "in this process" not in proc.stderr
    assert "Task tablescout.turns.run" in (tmp_path / "worker.log").read_text()


def test_a_worker_without_a_model_fails_the_turn_with_the_reason(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    flush_broker()
    env = worker_environment(turn_world, fake_anthropic)
    del env["TABLESCOUT_MODEL"]
    turn_id = turn_world.submit("How many orders?", thread="T_NO_MODEL")
    with running_worker(env, tmp_path / "worker.log"):
        enqueue(turn_id)
        wait_until(lambda: _finished(turn_world, turn_id), 60, "the failed turn")
    stored = turn_world.turn(turn_id)
    assert stored["status"] == "failed"
    from workers.tasks.turns import CANNOT_RUN  # importing the task module configures the Celery app

    assert stored["answer"] == CANNOT_RUN  # the chat user reads no configuration details
    assert "no model is configured" in (tmp_path / "worker.log").read_text()  # the operator does
    assert fake_anthropic.requests == []
