"""Teams end to end: activities into `tablescout serve`'s /api/messages, a real worker, replies through the fake
Bot Framework connector."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.server import BotServer
from core.store.models import Conversation, ProcessedEvent, Turn
from tests.e2e.conftest import TeamsStack
from tests.fakes.bot_framework_keys import FakeBotFrameworkKeys, new_key
from tests.fakes.bot_server import ServerThread, post
from tests.fakes.model_server import FakeModelServer, Say
from tests.fakes.teams_connector import FakeTeamsConnector
from tests.turn_world import TurnWorld, model_settings
from tests.workers.turns.scripts import ORDERS_2024, search_then_query
from tests.workers.turns.worker_support import REDIS_URL, wait_until

pytestmark = pytest.mark.timeout(300)

BOT_ID = "28:bot-app"
ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"
QUESTION = "How many orders were placed in 2024?"


def activity(service_url: str, text: str, *, activity_id: str | None = None) -> dict[str, Any]:
    message_id = activity_id or str(int(time.time() * 1000))
    return {
        "type": "message",
        "id": message_id,
        "timestamp": "2024-05-01T09:00:00.000Z",
        "serviceUrl": service_url,
        "channelId": "msteams",
        "from": {"id": "29:user-kim", "name": "Kim", "aadObjectId": "aad-kim"},
        "conversation": {
            "id": f"19:general@thread.tacv2;messageid={message_id}",
            "conversationType": "channel",
            "isGroup": True,
            "tenantId": "tenant-1",
        },
        "recipient": {"id": BOT_ID, "name": "tablescout"},
        "text": f"<at>tablescout</at> {text}",
        "entities": [
            {"type": "mention", "text": "<at>tablescout</at>", "mentioned": {"id": BOT_ID, "name": "tablescout"}},
        ],
        "channelData": {"tenant": {"id": "tenant-1"}, "channel": {"id": "19:general@thread.tacv2"}},
    }


def cards(connector: FakeTeamsConnector) -> list[dict[str, Any]]:
    return [
        attachment["content"]
        for message in connector.messages.values()
        for attachment in message.get("attachments") or []
        if attachment.get("contentType") == ADAPTIVE_CARD
    ]


def turns_for(world: TurnWorld, event_id: str) -> list[Turn]:
    with world.installation.store.transaction() as session:
        return list(
            session.scalars(
                select(Turn)
                .join(ProcessedEvent, ProcessedEvent.turn_id == Turn.id)
                .where(ProcessedEvent.platform == "teams", ProcessedEvent.event_id == event_id)
            )
        )


def test_a_test_activity_gets_one_adaptive_card_and_a_duplicate_is_ignored(teams_stack: TeamsStack) -> None:
    stack = teams_stack
    stack.model.latency_s = 1.2
    stack.model.script(search_then_query(QUESTION, "erp", "ORD_MST", ORDERS_2024, "{value} orders."))
    incoming = activity(stack.connector.url, QUESTION, activity_id="1700000000101")
    assert stack.post_activity(incoming).status_code == 200
    assert stack.post_activity(incoming).status_code == 200  # the same activity.id again
    wait_until(lambda: bool(cards(stack.connector)), 90, "the Adaptive Card answer")
    time.sleep(2)
    [card] = cards(stack.connector)
    expected = stack.world.erp_scalar(ORDERS_2024)
    text = str(card)
    assert f"{expected} orders." in text
    assert "ORD_MST" in text
    assert len(stack.connector.created) == 1  # the status message, updated into the card
    status_updates = [r for r in stack.connector.requests if r.method == "PUT"]
    assert len(status_updates) >= 2
    [turn] = turns_for(stack.world, "1700000000101")
    assert turn.user_id == "aad-kim"
    assert turn.question == QUESTION  # the bot's mention stripped
    with stack.world.installation.store.transaction() as session:
        conversation = session.get(Conversation, turn.conversation_id)
        assert conversation is not None
        assert conversation.reference is not None
    assert len(stack.model.requests) == 4


def test_a_personal_chat_is_private(teams_stack: TeamsStack) -> None:
    stack = teams_stack
    stack.model.script([Say("Hello Kim.")])
    incoming = activity(stack.connector.url, "hello", activity_id="1700000000202")
    incoming["conversation"] = {"id": "a:1personal-chat-kim", "conversationType": "personal", "tenantId": "tenant-1"}
    assert stack.post_activity(incoming).status_code == 200
    wait_until(lambda: bool(cards(stack.connector)), 90, "the answer")
    [turn] = turns_for(stack.world, "1700000000202")
    with stack.world.installation.store.transaction() as session:
        conversation = session.get(Conversation, turn.conversation_id)
        assert conversation is not None
        assert conversation.private


def test_a_malformed_body_is_400_and_nothing_is_stored(teams_stack: TeamsStack) -> None:
    response = post(f"{teams_stack.server.url}/api/messages", "{not json", {"Content-Type": "application/json"})
    assert response.status_code == 400
    response = teams_stack.post_activity({"type": "message", "id": "x"})
    assert response.status_code == 400


def test_production_configuration_refuses_an_activity_without_a_valid_token(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    settings = model_settings(
        fake_anthropic,
        turn_world.settings,
        redis_url=REDIS_URL,
        teams_app_id="00000000-0000-0000-0000-00000000a11d",
        teams_app_password="app-secret",
    )
    published: list[tuple[str, Any]] = []
    bot = BotServer(settings, turn_world.installation.store, send=lambda name, args: published.append((name, args)))
    server = ServerThread(bot.web_app()).start()
    try:
        for n, authorization in enumerate([None, "Bearer not-a-jwt", "Basic dXNlcjpwYXNz"]):
            event_id = f"unauth-{uuid.uuid4().hex[:8]}-{n}"
            body = activity("https://smba.trafficmanager.net/emea/", QUESTION, activity_id=event_id)
            headers = {"Content-Type": "application/json"} | ({"Authorization": authorization} if authorization else {})
            response = post(f"{server.url}/api/messages", json.dumps(body), headers)
            assert response.status_code == 401, (authorization, response.text)
            assert turns_for(turn_world, event_id) == []
            with turn_world.installation.store.transaction() as session:
                assert session.get(ProcessedEvent, ("teams", event_id)) is None
    finally:
        server.stop()
    assert published == []


APP_ID = "00000000-0000-0000-0000-00000000a11d"
SERVICE_URL = "https://smba.trafficmanager.net/emea/"


def test_production_configuration_accepts_a_signed_channel_token_and_nothing_else(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    published: list[tuple[str, Any]] = []
    with FakeBotFrameworkKeys() as keys:
        settings = model_settings(
            fake_anthropic,
            turn_world.settings,
            redis_url=REDIS_URL,
            teams_app_id=APP_ID,
            teams_app_password="app-secret",
            teams_openid_metadata_url=keys.metadata_url,
        )
        bot = BotServer(settings, turn_world.installation.store, send=lambda name, args: published.append((name, args)))
        server = ServerThread(bot.web_app()).start()
        try:
            refused = {
                "another audience": keys.token("some-other-bot", SERVICE_URL),
                "another service URL": keys.token(APP_ID, "https://elsewhere.example.com/"),
                "another issuer": keys.token(APP_ID, SERVICE_URL, issuer="https://login.example.com"),
                "expired": keys.token(APP_ID, SERVICE_URL, lifetime_s=-600),
                "an unknown signing key": keys.token(APP_ID, SERVICE_URL, key=new_key()),
            }
            for why, token in refused.items():
                event_id = f"signed-{uuid.uuid4().hex[:8]}"
                body = json.dumps(activity(SERVICE_URL, QUESTION, activity_id=event_id))
                headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
                response = post(f"{server.url}/api/messages", body, headers)
                assert response.status_code == 401, why
                assert turns_for(turn_world, event_id) == [], why
            assert published == []
            event_id = f"signed-{uuid.uuid4().hex[:8]}"
            body = json.dumps(activity(SERVICE_URL, QUESTION, activity_id=event_id))
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {keys.token(APP_ID, SERVICE_URL)}"}
            response = post(f"{server.url}/api/messages", body, headers)
        finally:
            server.stop()
    assert response.status_code == 200, response.text
    [turn] = turns_for(turn_world, event_id)
    assert turn.question == QUESTION
    assert published == [("tablescout.turns.run", [turn.id])]
