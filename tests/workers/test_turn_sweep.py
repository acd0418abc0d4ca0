"""Turns whose job was lost are run again or failed honestly (workers/turn_sweep.py): through the sweep's own
functions, and through a real worker with its beat, a Redis the test restarts empty, and the fake Slack, which shows
the status message replaced by exactly one answer."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text, update
from sqlalchemy.engine import make_url

from core.store.models import OutboxMessage, Turn
from core.store.repositories import turns as turn_repo
from tests.fakes.model_server import Exchange, FakeModelServer, Say, Slow, Step
from tests.fakes.slack_server import FakeSlack, SlackMessage
from tests.redis_server import RedisServer
from tests.turn_world import TurnWorld
from tests.workers.turns.worker_support import Worker, enqueue, running_worker, wait_until, worker_environment
from workers.turn_sweep import sweep_turns

pytestmark = pytest.mark.timeout(300)

CHANNEL = "C_SWEEP"
_threads = itertools.count(1)


def _thread_ts() -> str:
    return f"{int(time.time())}.{next(_threads):06d}"


def _age(world: TurnWorld, turn_id: int, seconds: float) -> None:
    """Make the turn look as if it was queued (or last queued again) `seconds` ago."""
    past = turn_repo.now() - timedelta(seconds=seconds)
    with world.installation.store.transaction() as session:
        session.execute(update(Turn).where(Turn.id == turn_id).values(queued_at=past, requeued_at=past))


def test_a_queued_turn_is_queued_again_until_its_tries_are_spent_then_failed_with_one_answer(
    turn_world: TurnWorld,
) -> None:
    settings = turn_world.settings.model_copy(update={"turn_requeue_after_s": 60.0, "turn_max_tries": 3})
    turn_id = turn_world.submit("How many orders were placed in 2024?", channel=CHANNEL, thread=_thread_ts())
    published: list[int] = []
    store = turn_world.installation.store

    assert turn_id not in sweep_turns(store, settings, published.append).requeued  # queued just now: left alone
    for requeues in (1, 2):
        _age(turn_world, turn_id, 61)
        swept = sweep_turns(store, settings, published.append)
        assert turn_id in swept.requeued
        assert sweep_turns(store, settings, published.append).requeued.count(turn_id) == 0  # not again at once
        with store.transaction() as session:
            turn = session.get(Turn, turn_id)
            assert turn is not None
            assert (turn.status, turn.requeues) == ("queued", requeues)
    assert published.count(turn_id) == 2
    _age(turn_world, turn_id, 61)
    swept = sweep_turns(store, settings, published.append)
    assert turn_id in swept.failed
    assert published.count(turn_id) == 2
    stored = turn_world.turn(turn_id)
    assert stored["status"] == "failed"
    assert stored["answer"].startswith("I could not start on this question: no worker took it up within 180 s")
    with store.transaction() as session:
        answers = session.scalars(
            select(OutboxMessage).where(OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "answer")
        ).all()
        assert [(a.status, a.payload["status"], a.payload["answer"]) for a in answers] == [
            ("pending", "failed", stored["answer"])
        ]
    _age(turn_world, turn_id, 61)
    assert turn_id not in sweep_turns(store, settings, published.append).failed  # finished: never touched again


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    yield server
    server.close()


def _is_status(message: SlackMessage) -> bool:
    return len(message.blocks) == 1 and message.blocks[0].get("type") == "context"


def _answered(slack: FakeSlack, thread_ts: str) -> bool:
    return any(not _is_status(m) for m in slack.thread(CHANNEL, thread_ts))


def _environment(
    world: TurnWorld, model: FakeModelServer, slack: FakeSlack, redis: RedisServer, **settings: object
) -> dict[str, str]:
    env = worker_environment(world, model, sweep_interval_s=1, turn_lease_grace_s=0.5, **settings)
    return env | {
        "TABLESCOUT_REDIS_URL": f"{redis.url}/0",
        "SLACK_BOT_TOKEN": slack.token,
        "TABLESCOUT_SLACK_API_URL": slack.url,
    }


def test_a_job_redis_lost_before_any_worker_took_it_is_queued_again_and_answered_once(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, redis: RedisServer, tmp_path: Path
) -> None:
    fake_anthropic.script(lambda exchange: Say("ORD_MST holds the orders."))
    ts = _thread_ts()
    turn_id = turn_world.submit("Which table holds the walrus orders?", channel=CHANNEL, thread=ts)
    enqueue(turn_id, f"{redis.url}/0")
    redis.stop()
    redis.start()  # empty: the published job is gone, the turn stays queued
    with FakeSlack() as slack:
        env = _environment(turn_world, fake_anthropic, slack, redis, turn_requeue_after_s=8)
        with running_worker(env, tmp_path / "worker.log", beat=tmp_path / "beat"):
            wait_until(lambda: _answered(slack, ts), 90, "the answer in the thread")
            time.sleep(2)  # a second answer, or a second run, would show by now
        [answer] = slack.thread(CHANNEL, ts)
    assert "ORD_MST holds the orders." in answer.block_text
    stored = turn_world.turn(turn_id)
    assert (stored["status"], stored["attempts"]) == ("answered", 1)
    with turn_world.installation.store.transaction() as session:
        assert session.scalar(select(Turn.requeues).where(Turn.id == turn_id)) == 1


@pytest.mark.parametrize("max_tries", [2, 1], ids=["run-again", "fail-honestly"])
def test_a_turn_whose_worker_died_with_its_redis_message_is_run_again_or_failed_in_place_of_its_status(
    turn_world: TurnWorld,
    fake_anthropic: FakeModelServer,
    redis: RedisServer,
    tmp_path: Path,
    max_tries: int,
) -> None:
    marker = f"narwhal{max_tries}"
    asked: list[int] = []

    def model(exchange: Exchange) -> Step:
        if marker in exchange.user_text:
            asked.append(exchange.request_number)
            if len(asked) == 1:
                return Slow(60, Say("this reply never arrives: the worker is killed while waiting for it"))
        return Say("ORD_MST holds the orders.")

    fake_anthropic.script(model)
    ts = _thread_ts()
    turn_id = turn_world.submit(f"Which table holds the {marker} orders?", channel=CHANNEL, thread=ts)
    with FakeSlack() as slack:
        # Deadline 8 s: the lease ends 23 s after the claim; the broker itself would redeliver only after 4200 s.
        env = _environment(turn_world, fake_anthropic, slack, redis, turn_deadline_s=8, turn_max_tries=max_tries)
        first = Worker(env, tmp_path / "first.log", beat=tmp_path / "first-beat")
        try:
            first.wait_ready()
            enqueue(turn_id, f"{redis.url}/0")
            wait_until(lambda: bool(asked) and bool(slack.thread(CHANNEL, ts)), 60, "the status message")
            first.kill()
            redis.stop()
            redis.start()  # the unacknowledged job died with the worker
        finally:
            first.stop()
        assert turn_world.turn(turn_id)["status"] == "running"
        with running_worker(env, tmp_path / "second.log", beat=tmp_path / "second-beat"):
            wait_until(lambda: _answered(slack, ts), 120, "the answer in place of the status message")
            time.sleep(2)
        [message] = slack.thread(CHANNEL, ts)  # the status message, now the answer
        assert message.edits >= 1
    stored = turn_world.turn(turn_id)
    if max_tries == 2:
        assert (stored["status"], stored["attempts"], len(asked)) == ("answered", 2, 2)
        assert "ORD_MST holds the orders." in message.block_text
    else:
        assert (stored["status"], stored["attempts"], len(asked)) == ("failed", 1, 1)
        assert "I could not finish this answer: the work on it was cut off 1 time before" in message.block_text


def test_a_turn_whose_store_went_away_mid_turn_is_run_again_once_the_store_is_back(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, redis: RedisServer, tmp_path: Path
) -> None:
    marker = "okapi"
    asked: list[int] = []

    def model(exchange: Exchange) -> Step:
        if marker in exchange.user_text:
            asked.append(exchange.request_number)
            if len(asked) == 1:
                return Slow(4, Say("this reply comes while the store is away: it cannot be recorded"))
        return Say("ORD_MST holds the orders.")

    fake_anthropic.script(model)
    ts = _thread_ts()
    turn_id = turn_world.submit(f"Which table holds the {marker} orders?", channel=CHANNEL, thread=ts)
    url = turn_world.settings.database_url
    assert url is not None
    store_url = make_url(url.get_secret_value())
    database = store_url.database
    admin = create_engine(store_url.set(drivername="postgresql+psycopg", database="postgres"))
    with FakeSlack() as slack, admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        env = _environment(turn_world, fake_anthropic, slack, redis, turn_deadline_s=8)
        with running_worker(env, tmp_path / "worker.log", beat=tmp_path / "beat"):
            enqueue(turn_id, f"{redis.url}/0")
            wait_until(lambda: bool(asked), 60, "the first model call")
            try:
                conn.execute(text(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS false'))
                conn.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = :database AND pid <> pg_backend_pid()"
                    ),
                    {"database": database},
                )
                wait_until(lambda: _turn_job_failed(tmp_path), 30, "the turn job ending without an answer")
            finally:
                conn.execute(text(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS true'))
            wait_until(lambda: _answered(slack, ts), 120, "the answer once the store is back")
            time.sleep(2)
        [message] = slack.thread(CHANNEL, ts)
    admin.dispose()
    assert "ORD_MST holds the orders." in message.block_text
    stored = turn_world.turn(turn_id)
    assert (stored["status"], stored["attempts"], len(asked)) == ("answered", 2, 2)
    log = (tmp_path / "worker.log").read_text(errors="replace")
    assert "raised unexpected" not in log  # the sweeps meanwhile said in one line that the store was away
    assert "outbox sweep cut off: the metadata store went away" in log


def _turn_job_failed(folder: Path) -> bool:
    """Whether the worker logged a turn job that ended without an answer: the store did not come back when the job
    tried to run the turn again, so it left the turn to the sweep."""
    return "the sweep runs the turn again later" in (folder / "worker.log").read_text(errors="replace")
