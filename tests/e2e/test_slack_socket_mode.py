"""Slack over Socket Mode: the real slack-bolt handler connects to the fake Socket Mode server, a mention arrives as
an envelope, is stored with its job and then acknowledged."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bot.server import BotServer
from core.store.database import Store
from core.store.models import ProcessedEvent, Turn
from tests.e2e.conftest import CHANNEL, event_payload
from tests.fakes.bot_server import ServerThread
from tests.fakes.slack_server import BOT_USER_ID, FakeSlack
from tests.fakes.slack_socket import FakeSocketMode
from tests.redis_server import redis_url
from tests.support import isolated_settings
from tests.workers.turns.worker_support import wait_until


def test_a_mention_over_socket_mode_is_stored_then_acknowledged(store: Store, tmp_path: Path) -> None:
    published: list[tuple[str, Any]] = []
    with FakeSlack() as slack, FakeSocketMode(slack) as socket:
        settings = isolated_settings(
            tmp_path,
            redis_url=redis_url(13),
            slack_bot_token=slack.token,
            slack_app_token=slack.app_token,
            slack_api_url=slack.url,
        )
        bot = BotServer(settings, store, slack_socket_mode=True, send=lambda name, args: published.append((name, args)))
        assert bot.surfaces() == {"slack": "socket mode", "teams": "off"}
        server = ServerThread(bot.web_app()).start()
        try:
            ts = f"{time.time():.6f}"
            event = {
                "type": "app_mention",
                "user": "U_SALES",
                "text": f"<@{BOT_USER_ID}> how many orders were placed in 2024?",
                "ts": ts,
                "channel": CHANNEL,
            }
            envelope = socket.send_event(event_payload(event, "Ev_SOCKET_1"))
            wait_until(lambda: envelope in socket.acks, 30, "the acknowledgement")
            wait_until(lambda: bool(published), 10, "the job published")
        finally:
            server.stop()
    with store.transaction() as session:
        turn_id = session.scalar(select(ProcessedEvent.turn_id).where(ProcessedEvent.event_id == "Ev_SOCKET_1"))
        assert turn_id is not None
        turn = session.get(Turn, turn_id)
        assert turn is not None
        assert turn.question == "how many orders were placed in 2024?"
    assert published == [("tablescout.turns.run", [turn_id])]
    assert socket.connections == 1
