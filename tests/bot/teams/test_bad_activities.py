"""Issue 30, item 8, for Teams: activities posted to /api/messages with a valid Bot Framework token (signed by the
fake channel keys, validated by botbuilder for real) whose body is not an activity of the schema's shape (nested too
deep, a JSON array, bytes that are not UTF-8, a mention whose `mentioned` is a string, a `serviceUrl` that is a
number, a message without an id, ...) get 400 with the reason as JSON, logged, and nothing is stored or published;
a body over 1 MiB gets 413; and the route keeps storing good activities."""

from __future__ import annotations

import copy
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.server import BotServer
from core.store.database import Store
from core.store.models import ProcessedEvent
from tests.fakes.bot_framework_keys import FakeBotFrameworkKeys
from tests.fakes.bot_server import ServerThread
from tests.redis_server import redis_url
from tests.support import isolated_settings
from tests.workers.turns.worker_support import wait_until

APP_ID = "00000000-0000-0000-0000-0000000bad1d"
SERVICE_URL = "https://smba.trafficmanager.net/emea/"
BOT_ID = "28:bot-app"


@dataclass
class TeamsRoute:
    url: str
    keys: FakeBotFrameworkKeys
    published: list[tuple[str, Any]]


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes


@pytest.fixture(scope="module")
def route(store: Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamsRoute]:
    published: list[tuple[str, Any]] = []
    with FakeBotFrameworkKeys() as keys:
        settings = isolated_settings(
            tmp_path_factory.mktemp("home"),
            redis_url=redis_url(13),
            teams_app_id=APP_ID,
            teams_app_password="app-secret",
            teams_openid_metadata_url=keys.metadata_url,
        )
        bot = BotServer(settings, store, send=lambda name, args: published.append((name, args)))
        server = ServerThread(bot.web_app()).start()
        try:
            yield TeamsRoute(f"{server.url}/api/messages", keys, published)
        finally:
            server.stop()


def send(route: TeamsRoute, body: bytes) -> Reply:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {route.keys.token(APP_ID, SERVICE_URL)}"}
    request = urllib.request.Request(route.url, data=body, headers=headers, method="POST")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the local test server
            return Reply(response.status, response.read())
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, exc.read())


def message(activity_id: str, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "message",
        "id": activity_id,
        "timestamp": "2024-05-01T09:00:00.000Z",
        "serviceUrl": SERVICE_URL,
        "channelId": "msteams",
        "from": {"id": "29:user-kim", "name": "Kim", "aadObjectId": "aad-kim"},
        "conversation": {
            "id": f"19:general@thread.tacv2;messageid={activity_id}",
            "conversationType": "channel",
            "isGroup": True,
            "tenantId": "tenant-1",
        },
        "recipient": {"id": BOT_ID, "name": "tablescout"},
        "text": "<at>tablescout</at> how many orders were placed in 2024?",
        "entities": [
            {"type": "mention", "text": "<at>tablescout</at>", "mentioned": {"id": BOT_ID, "name": "tablescout"}},
        ],
        "channelData": {"tenant": {"id": "tenant-1"}, "channel": {"id": "19:general@thread.tacv2"}},
    }
    return body | changes


def encoded(body: object) -> bytes:
    return json.dumps(body).encode()


def stored_events(store: Store) -> int:
    with store.transaction() as session:
        return int(session.scalar(select(func.count()).select_from(ProcessedEvent)) or 0)


def without(body: dict[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != name}


MALFORMED: dict[str, tuple[bytes, str]] = {
    "nested-100000-deep": (b'{"type": "message", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested more"),
    "nested-500-deep": (encoded(message("1", channelData={"x": json.loads("[" * 500 + "]" * 500)})), "nested more"),
    "json-array": (b"[1,2,3]", "the body is not a JSON object"),
    "json-string": (b'"hello"', "the body is not a JSON object"),
    "not-json": (b'{"type": "message", ', "the body is not valid JSON"),
    "not-utf-8": (encoded(message("2")).replace(b"how many", b"\xff\xfe many"), "the body is not UTF-8 text"),
    "without-type": (encoded(without(message("3"), "type")), "type is missing"),
    "message-without-id": (encoded(without(message("4"), "id")), "id is missing"),
    "id-an-object": (encoded(message("5", id={"n": 5})), "id is not a string"),
    "conversation-a-string": (encoded(message("6", conversation="19:general")), "conversation is not an object"),
    "conversation-id-a-number": (encoded(message("7", conversation={"id": 7})), "conversation.id is missing"),
    "from-a-string": (encoded(message("8", **{"from": "29:user-kim"})), "from is not an object"),
    "from-without-id": (encoded(message("9", **{"from": {"name": "Kim"}})), "from.id is missing"),
    "text-an-object": (encoded(message("10", text={"value": "hi"})), "text is not a string"),
    "mentioned-a-string": (
        encoded(message("11", entities=[{"type": "mention", "text": "<at>x</at>", "mentioned": "28:bot-app"}])),
        "entities[].mentioned is not an object",
    ),
    "entities-a-string": (encoded(message("12", entities="mention")), "entities is not a list of objects"),
    "service-url-a-number": (encoded(message("13", serviceUrl=5)), "serviceUrl is not a string"),
    "service-url-not-http": (encoded(message("14", serviceUrl="ftp://smba/")), "serviceUrl is not an http(s)"),
    "channel-data-tenant-a-string": (
        encoded(message("15", channelData={"tenant": "tenant-1"})),
        "channelData.tenant is not an object",
    ),
    "reply-to-id-an-object": (encoded(message("16", replyToId={"id": "1"})), "replyToId is not a string"),
    "timestamp-not-a-time": (encoded(message("17", timestamp="yesterday")), "a field has a type the activity schema"),
}


@pytest.mark.parametrize(("body", "said"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_authenticated_activity_gets_400_with_the_reason_and_stores_nothing(
    route: TeamsRoute, store: Store, caplog: pytest.LogCaptureFixture, body: bytes, said: str
) -> None:
    before, published = stored_events(store), len(route.published)
    with caplog.at_level(logging.INFO):
        reply = send(route, body)
    assert reply.status == 400, reply.body[:300]
    error = json.loads(reply.body)["error"]
    assert said in error
    assert "Traceback" not in reply.body.decode()
    assert stored_events(store) == before
    assert len(route.published) == published
    refusals = [r.getMessage() for r in caplog.records if r.name == "bot.server" and r.levelno == logging.WARNING]
    assert refusals == [f"refused a Teams activity: {error}"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_body_over_one_mib_gets_413(route: TeamsRoute, store: Store) -> None:
    before = stored_events(store)
    reply = send(route, encoded(message("huge", text="x" * (1 << 20))))
    assert reply.status == 413
    assert json.loads(reply.body) == {"error": "the body is over 1048576 bytes"}
    assert stored_events(store) == before


def test_good_activities_are_stored_after_malformed_ones(route: TeamsRoute, store: Store) -> None:
    for body, _ in MALFORMED.values():
        send(route, body)
    published = len(route.published)
    activity_id = f"{int(time.time() * 1000)}"
    assert send(route, encoded(message(activity_id))).status == 200
    with store.transaction() as session:
        assert session.get(ProcessedEvent, ("teams", activity_id)) is not None
    wait_until(lambda: len(route.published) == published + 1, 10, "the job published")


WRONG_VALUES: tuple[object, ...] = (None, 7, "x", [], {}, [1], True)


def feedback(activity_id: str) -> dict[str, Any]:
    """Teams' feedback loop: a 👎 with its form's text on one of the bot's answers."""
    body = without(message(activity_id), "text") | {"type": "invoke", "name": "message/submitAction"}
    return body | {
        "replyToId": "1700000000999",
        "value": {
            "actionName": "feedback",
            "actionValue": {"reaction": "dislike", "feedback": json.dumps({"feedbackText": "wrong table"})},
        },
    }


@pytest.mark.parametrize("template", [message("mutated"), feedback("mutated")], ids=["message", "feedback"])
def test_no_field_of_the_wrong_type_makes_the_route_fail(
    route: TeamsRoute, caplog: pytest.LogCaptureFixture, template: dict[str, Any]
) -> None:
    """Each field of a message or a feedback invoke (at any depth) replaced by a value of each other type: 200 or
    400, never 500, nothing logged as an error."""
    problems: list[str] = []
    paths: list[tuple[str | int, ...]] = []
    pending: list[tuple[object, tuple[str | int, ...]]] = [(template, ())]
    while pending:
        value, prefix = pending.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            paths.append((*prefix, key))
            pending.append((item, (*prefix, key)))
    for n, path in enumerate(paths):
        for m, wrong in enumerate(WRONG_VALUES):
            changed = copy.deepcopy(template)
            target: Any = changed
            for step in path[:-1]:
                target = target[step]
            if type(target[path[-1]]) is type(wrong):
                continue
            target[path[-1]] = wrong
            if path != ("id",):
                changed["id"] = f"{template['type']}-{n}-{m}"
            caplog.clear()
            reply = send(route, encoded(changed))
            errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
            if reply.status not in (200, 400) or errors:
                problems.append(f"{'.'.join(map(str, path))}={wrong!r}: HTTP {reply.status} {errors}")
    assert problems == [], "\n".join(problems)
