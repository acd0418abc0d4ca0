"""A worker whose Redis restarts while it runs a turn reconnects and goes on consuming (workers/broker.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.model_server import Exchange, FakeModelServer, Say, Slow, Step
from tests.redis_server import RedisServer
from tests.turn_world import TurnWorld
from tests.workers.turns.worker_support import enqueue, running_worker, wait_until, worker_environment

pytestmark = pytest.mark.timeout(300)


def test_a_worker_reconnects_when_redis_restarts_under_a_running_turn(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    def model(exchange: Exchange) -> Step:
        if "zebra" in exchange.user_text:
            return Slow(4, Say("The first answer."))
        return Say("The second answer.")

    fake_anthropic.script(model)
    redis = RedisServer()
    redis.start()
    try:
        broker = f"{redis.url}/0"
        env = worker_environment(turn_world, fake_anthropic) | {"TABLESCOUT_REDIS_URL": broker}
        first = turn_world.submit("Which table holds the zebra orders?", thread="T_BROKER_RESTART_1")
        log = tmp_path / "worker.log"
        with running_worker(env, log) as worker:
            enqueue(first, broker)
            wait_until(lambda: len(fake_anthropic.requests) >= 1, 60, "the first turn's model call")
            redis.stop()  # the turn's job is unacknowledged (acks_late) while the model is still thinking
            redis.start()  # on the same port, empty
            second = turn_world.submit("Which table holds the lion orders?", thread="T_BROKER_RESTART_2")
            enqueue(second, broker)

            def exited() -> bool:
                return worker.process.poll() is not None

            wait_until(lambda: exited() or turn_world.turn(second)["status"] == "answered", 90, "the second answer")
            assert not exited(), log.read_text()[-3000:]
        text = log.read_text()
        assert "Unrecoverable error" not in text, text[-3000:]
        assert turn_world.turn(second)["answer"] == "The second answer."
        assert turn_world.turn(first)["answer"] == "The first answer."  # the running turn finished as well
    finally:
        redis.close()
