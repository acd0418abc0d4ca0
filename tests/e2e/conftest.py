"""The whole chat path on real components: the bot server (aiohttp, slack-bolt, botbuilder) in a thread of the
test process, a real Celery worker process on Redis, the fake Slack Web API and Bot Framework connector, and a
scripted model server; the metadata store and the sample databases of the turn tests."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.server import BotServer
from core.config.settings import Settings
from core.store.models import Conversation, Turn
from tests.fakes.bot_server import Reply, ServerThread, post
from tests.fakes.model_server import FakeModelServer
from tests.fakes.slack_server import TEAM_ID, FakeSlack
from tests.fakes.teams_connector import FakeTeamsConnector
from tests.turn_world import TurnWorld, model_settings
from tests.workers.turns.worker_support import REDIS_URL, Worker, flush_broker, worker_environment

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C0GENERAL"


def sign(body: str, timestamp: int, secret: str = SIGNING_SECRET) -> str:
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass
class ChatStack:
    world: TurnWorld
    slack: FakeSlack
    model: FakeModelServer
    server: ServerThread
    bot: BotServer

    def post_slack(
        self,
        payload: dict[str, Any],
        *,
        retry_num: int | None = None,
        age_s: int = 0,
        secret: str = SIGNING_SECRET,
    ) -> Reply:
        body = json.dumps(payload)
        timestamp = int(time.time()) - age_s
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": str(timestamp),
            "X-Slack-Signature": sign(body, timestamp, secret),
        }
        if retry_num is not None:
            headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        return post(f"{self.server.url}/slack/events", body, headers)

    def post_slack_form(self, body: str) -> Reply:
        """An interactivity request (shortcuts): a signed form body carrying `payload`."""
        timestamp = int(time.time())
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": str(timestamp),
            "X-Slack-Signature": sign(body, timestamp),
        }
        return post(f"{self.server.url}/slack/events", body, headers)

    def turns_in(self, channel: str, thread: str = "") -> list[dict[str, Any]]:
        with self.world.installation.store.transaction() as session:
            rows = session.execute(
                select(Turn.id, Turn.status, Turn.intent, Turn.pins, Turn.user_id, Conversation.private)
                .join(Conversation, Conversation.id == Turn.conversation_id)
                .where(Conversation.platform == "slack", Conversation.channel_id == channel)
                .where(Conversation.thread_id == thread)
                .order_by(Turn.id)
            ).all()
        return [dict(r._mapping) for r in rows]


def event_payload(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    return {
        "token": "unused",
        "team_id": TEAM_ID,
        "api_app_id": "A0TABLESCOUT",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
    }


def stack_settings(world: TurnWorld, model: FakeModelServer, slack: FakeSlack, **extra: Any) -> Settings:
    return model_settings(
        model,
        world.settings,
        redis_url=REDIS_URL,
        slack_bot_token=slack.token,
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=slack.url,
        **extra,
    )


@pytest.fixture(autouse=True)
def _notes_forgotten(forget_notes: None) -> None:
    """Every test here removes the notes it saves (tests/turn_world.py)."""


@pytest.fixture
def chat_stack(turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path) -> Iterator[ChatStack]:
    flush_broker()
    with FakeSlack() as slack:
        settings = stack_settings(turn_world, fake_anthropic, slack)
        bot = BotServer(settings, turn_world.installation.store)
        server = ServerThread(bot.web_app()).start()
        env = worker_environment(turn_world, fake_anthropic) | {
            "SLACK_BOT_TOKEN": slack.token,
            "TABLESCOUT_SLACK_API_URL": slack.url,
        }
        worker = Worker(env, tmp_path / "worker.log", concurrency=4)
        try:
            worker.wait_ready()
            yield ChatStack(turn_world, slack, fake_anthropic, server, bot)
        finally:
            worker.stop()
            server.stop()


@dataclass
class TeamsStack:
    world: TurnWorld
    connector: FakeTeamsConnector
    model: FakeModelServer
    server: ServerThread

    def post_activity(self, activity: dict[str, Any], authorization: str | None = None) -> Reply:
        headers = {"Content-Type": "application/json"}
        if authorization is not None:
            headers["Authorization"] = authorization
        return post(f"{self.server.url}/api/messages", json.dumps(activity), headers)


@pytest.fixture
def teams_stack(turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path) -> Iterator[TeamsStack]:
    """The bot server with Teams in testing mode (the Bot Framework Emulator's: no app id, no token) and a worker."""
    flush_broker()
    with FakeTeamsConnector() as connector:
        settings = model_settings(fake_anthropic, turn_world.settings, redis_url=REDIS_URL)
        bot = BotServer(settings, turn_world.installation.store, teams_testing=True)
        server = ServerThread(bot.web_app()).start()
        worker = Worker(worker_environment(turn_world, fake_anthropic), tmp_path / "worker.log", concurrency=2)
        try:
            worker.wait_ready()
            yield TeamsStack(turn_world, connector, fake_anthropic, server)
        finally:
            worker.stop()
            server.stop()
