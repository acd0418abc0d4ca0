"""Issue 30, item 8: signed requests to /slack/events whose body is not one Slack sends (nested too deep, a JSON
array, `"event": null`, `payload=%7Bnot-json`, a JSON string or number, a url_verification without a challenge,
an event_callback without event_id, bytes that are not UTF-8, fields of the wrong type) get 400 with the reason as
JSON, logged, nothing stored and no job published; a body over 1 MiB gets 413; an unsigned one stays 401; and the
server keeps storing good events. Through the real bot server (aiohttp, slack-bolt) against the fake Slack."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import func, select

from bot.server import BotServer
from core.store.database import Store
from core.store.models import ProcessedEvent
from tests.fakes.bot_server import ServerThread
from tests.fakes.slack_server import BOT_USER_ID, TEAM_ID, FakeSlack
from tests.fakes.slack_socket import FakeSocketMode
from tests.redis_server import redis_url
from tests.support import isolated_settings
from tests.workers.turns.worker_support import wait_until

SECRET = "bad-input-signing-secret"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


@dataclass
class SlackRoute:
    url: str
    published: list[tuple[str, Any]]


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes


@pytest.fixture(scope="module")
def route(store: Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlackRoute]:
    published: list[tuple[str, Any]] = []
    with FakeSlack() as slack:
        settings = isolated_settings(
            tmp_path_factory.mktemp("home"),
            redis_url=redis_url(13),
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
        )
        bot = BotServer(settings, store, send=lambda name, args: published.append((name, args)))
        server = ServerThread(bot.web_app()).start()
        try:
            yield SlackRoute(f"{server.url}/slack/events", published)
        finally:
            server.stop()


def send(route: SlackRoute, body: bytes, content_type: str = JSON, *, signed: bool = True) -> Reply:
    timestamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": f"v0={digest}" if signed else "v0=" + "0" * 64,
    }
    request = urllib.request.Request(route.url, data=body, headers=headers, method="POST")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the local test server
            return Reply(response.status, response.read())
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, exc.read())


def stored_events(store: Store) -> int:
    with store.transaction() as session:
        return int(session.scalar(select(func.count()).select_from(ProcessedEvent)) or 0)


def mention(event_id: str, text: str = "how many orders were placed in 2024?") -> dict[str, Any]:
    ts = f"{time.time():.6f}"
    return {
        "token": "unused",
        "team_id": TEAM_ID,
        "api_app_id": "A0TABLESCOUT",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "event": {
            "type": "app_mention",
            "user": "U_SALES",
            "text": f"<@{BOT_USER_ID}> {text}",
            "ts": ts,
            "channel": "C0BAD",
            "event_ts": ts,
        },
    }


def assistant_started() -> dict[str, Any]:
    return mention("Ev_ASSISTANT") | {
        "event": {
            "type": "assistant_thread_started",
            "assistant_thread": {
                "user_id": "U_SALES",
                "context": {"channel_id": "C0BAD", "team_id": TEAM_ID, "enterprise_id": None},
                "channel_id": "D0ASSIST",
                "thread_ts": "1700000000.000300",
            },
            "event_ts": "1700000000.000301",
        }
    }


def direct_message() -> dict[str, Any]:
    event = mention("x")["event"] | {"type": "message", "channel_type": "im", "channel": "D0ASSIST", "text": "hi"}
    return mention("Ev_DM") | {"event": event | {"thread_ts": "1700000000.000300"}}


def form(payload: object) -> bytes:
    return b"payload=" + quote(json.dumps(payload)).encode()


def shortcut() -> dict[str, Any]:
    return {
        "type": "message_action",
        "callback_id": "remember_this",
        "trigger_id": "1.2.3",
        "team": {"id": TEAM_ID, "domain": "fake"},
        "channel": {"id": "C0BAD", "name": "bad"},
        "user": {"id": "U_SALES", "name": "sales"},
        "message": {"type": "message", "ts": "1700000000.000100", "text": "ORD_MST_BAK is a stale copy"},
    }


def click() -> dict[str, Any]:
    return {
        "type": "block_actions",
        "trigger_id": "1.2.4",
        "team": {"id": TEAM_ID},
        "user": {"id": "U_SALES"},
        "channel": {"id": "C0BAD"},
        "container": {"type": "message", "message_ts": "1700000000.000200", "channel_id": "C0BAD"},
        "message": {"ts": "1700000000.000200", "text": "an answer"},
        "actions": [{"action_id": "answer_feedback", "block_id": "feedback", "value": "good", "type": "button"}],
    }


def reason() -> dict[str, Any]:
    return {
        "type": "view_submission",
        "team": {"id": TEAM_ID},
        "user": {"id": "U_SALES"},
        "view": {
            "id": "V1",
            "type": "modal",
            "callback_id": "feedback_reason",
            "private_metadata": "999999999",
            "state": {"values": {"reason": {"reason_text": {"type": "plain_text_input", "value": "wrong table"}}}},
        },
    }


def nested(depth: int) -> bytes:
    return b'{"type": "event_callback", "event_id": "Ev_DEEP", "x": ' + b"[" * depth + b"]" * depth + b"}"


MALFORMED: dict[str, tuple[bytes, str, str]] = {
    "nested-100000-deep": (nested(100_000), JSON, "the body is nested more than 64 levels deep"),
    "nested-500-deep": (nested(500), JSON, "the body is nested more than 64 levels deep"),
    "json-array": (b"[1,2,3]", JSON, "the body is not a JSON object"),
    "json-string": (b'"hello"', JSON, "the body is not a JSON object"),
    "json-number": (b"42", JSON, "the body is not a JSON object"),
    "not-json": (b'{"type": "event_callback", ', JSON, "the body is not valid JSON"),
    "empty": (b"", JSON, "the body is empty"),
    "not-utf-8": (json.dumps(mention("Ev_BYTES")).encode().replace(b"how many", b"\xff\xfe many"), JSON, "UTF-8"),
    "event-null": (json.dumps(mention("Ev_NULL") | {"event": None}).encode(), JSON, "event is missing"),
    "event-a-string": (json.dumps(mention("Ev_STR") | {"event": "app_mention"}).encode(), JSON, "event is missing"),
    "event-without-type": (json.dumps(mention("Ev_NOTYPE") | {"event": {}}).encode(), JSON, "event.type is missing"),
    "event-user-an-object": (
        json.dumps(mention("Ev_USER") | {"event": mention("x")["event"] | {"user": {"id": "U1"}}}).encode(),
        JSON,
        "event.user is not a string",
    ),
    "event-text-a-list": (
        json.dumps(mention("Ev_TEXT") | {"event": mention("x")["event"] | {"text": ["a"]}}).encode(),
        JSON,
        "event.text is not a string",
    ),
    "without-event-id": (
        json.dumps({k: v for k, v in mention("x").items() if k != "event_id"}).encode(),
        JSON,
        "event_id is missing",
    ),
    "authorizations-a-number": (
        json.dumps(mention("Ev_AUTH") | {"authorizations": 5}).encode(),
        JSON,
        "authorizations is not a list of objects",
    ),
    "without-type": (json.dumps({"event_id": "Ev_T", "event": {}}).encode(), JSON, "type is missing"),
    "url-verification-without-challenge": (b'{"type": "url_verification"}', JSON, "challenge is missing"),
    "url-verification-challenge-a-number": (
        b'{"type": "url_verification", "challenge": 7}',
        JSON,
        "challenge is missing or not a string",
    ),
    "payload-not-json": (b"payload=%7Bnot-json", FORM, "the form's payload is not valid JSON"),
    "payload-an-array": (b"payload=%5B1%5D", FORM, "the form's payload is not a JSON object"),
    "form-without-payload": (b"user=U1&text=hi", FORM, "neither JSON nor a form with a payload"),
    "shortcut-message-a-string": (form(shortcut() | {"message": "x"}), FORM, "message is not an object"),
    "shortcut-user-a-number": (form(shortcut() | {"user": 3}), FORM, "user is not an object"),
    "shortcut-channel-id-a-list": (form(shortcut() | {"channel": {"id": ["C1"]}}), FORM, "channel.id is not a string"),
    "click-actions-a-string": (form(click() | {"actions": "x"}), FORM, "actions is not a list of objects"),
    "click-without-actions": (form(click() | {"actions": []}), FORM, "actions is missing or empty"),
    "click-value-a-number": (
        form(click() | {"actions": [{"action_id": "answer_feedback", "value": 1}]}),
        FORM,
        "actions[].value is not a string",
    ),
    "view-null": (form(reason() | {"view": None}), FORM, "view is missing or not an object"),
    "view-state-values-a-list": (
        form(reason() | {"view": reason()["view"] | {"state": {"values": [1]}}}),
        FORM,
        "view.state.values is not an object",
    ),
}


@pytest.mark.parametrize(("body", "content_type", "said"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_signed_request_gets_400_with_the_reason_and_stores_nothing(
    route: SlackRoute, store: Store, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str, said: str
) -> None:
    before, published = stored_events(store), len(route.published)
    with caplog.at_level(logging.INFO):
        reply = send(route, body, content_type)
    assert reply.status == 400, reply.body[:300]
    error = json.loads(reply.body)["error"]
    assert error.startswith("not a request Slack sends: ")
    assert said in error
    assert "Traceback" not in reply.body.decode()
    assert stored_events(store) == before
    assert len(route.published) == published
    refusals = [r.getMessage() for r in caplog.records if r.name == "bot.slack.app" and r.levelno == logging.WARNING]
    [refusal] = refusals
    assert refusal.endswith(f": {error.removeprefix('not a request Slack sends: ')}")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_unsigned_malformed_body_is_refused_as_unsigned(route: SlackRoute) -> None:
    for body in (b"[1,2,3]", nested(100_000), b"\xff\xfe", b"payload=%7Bnot-json"):
        reply = send(route, body, signed=False)
        assert (reply.status, json.loads(reply.body)) == (401, {"error": "invalid request"})


def test_a_body_over_one_mib_gets_413(route: SlackRoute, store: Store) -> None:
    before = stored_events(store)
    huge = json.dumps(mention("Ev_HUGE", "x" * (1 << 20))).encode()
    reply = send(route, huge)
    assert reply.status == 413
    assert json.loads(reply.body) == {"error": "the body is over 1048576 bytes"}
    assert stored_events(store) == before


def test_good_events_are_stored_after_malformed_ones(route: SlackRoute, store: Store) -> None:
    """Nothing is lost: refusals leave the route working, and an url_verification is still answered."""
    for body, content_type, _ in MALFORMED.values():
        send(route, body, content_type)
    assert json.loads(send(route, b'{"type": "url_verification", "challenge": "c-1"}').body) == {"challenge": "c-1"}
    published = len(route.published)
    reply = send(route, json.dumps(mention("Ev_GOOD_AFTER_BAD")).encode())
    assert reply.status == 200, reply.body
    with store.transaction() as session:
        assert session.get(ProcessedEvent, ("slack", "Ev_GOOD_AFTER_BAD")) is not None
    wait_until(lambda: len(route.published) == published + 1, 10, "the job published")


WRONG_VALUES: tuple[object, ...] = (None, 7, "x", [], {}, [1], {"a": [1]}, True)


def mutations(payload: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """`payload` with one field (at any depth) replaced by each value of another type."""

    def paths(value: object, prefix: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
        if isinstance(value, dict):
            for key, item in value.items():
                yield (*prefix, key)
                yield from paths(item, (*prefix, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield (*prefix, index)
                yield from paths(item, (*prefix, index))

    for path in paths(payload, ()):
        for wrong in WRONG_VALUES:
            changed = copy.deepcopy(payload)
            target: Any = changed
            for step in path[:-1]:
                target = target[step]
            if type(target[path[-1]]) is type(wrong):
                continue
            target[path[-1]] = wrong
            yield ".".join(map(str, path)) + f"={wrong!r}", changed


def test_no_field_of_the_wrong_type_makes_the_server_fail(route: SlackRoute, caplog: pytest.LogCaptureFixture) -> None:
    """Every field of a mention, an assistant thread's start and a question in it, a shortcut, a feedback click and
    a feedback reason, at any depth, replaced by a value of each other type: each request is answered (200 when it
    is harmless, 400 otherwise; bolt's 404 for a type it has no listener for), never 500, and nothing logs an
    error."""
    answered: dict[int, int] = {}
    problems: list[str] = []
    templates = {
        "mention": mention("Ev_MUTATED"),
        "assistant thread started": assistant_started(),
        "direct message in an assistant thread": direct_message(),
        "shortcut": shortcut(),
        "click": click(),
        "reason": reason(),
    }
    for n, (name, template) in enumerate(templates.items()):
        is_event = template.get("type") == "event_callback"
        for m, (where, payload) in enumerate(mutations(template)):
            if is_event and isinstance(payload.get("event_id"), str):
                payload["event_id"] = f"Ev_MUTATED_{n}_{m}"  # a stored variant must not hide the next one
            body = json.dumps(payload).encode() if is_event else form(payload)
            caplog.clear()
            reply = send(route, body, JSON if is_event else FORM)
            answered[reply.status] = answered.get(reply.status, 0) + 1
            errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
            if reply.status not in (200, 400, 404) or errors:
                problems.append(f"{name} {where}: HTTP {reply.status} {errors}")
    assert problems == [], "\n".join(problems)
    assert answered.get(400, 0) > 50


def test_a_malformed_socket_mode_envelope_is_acknowledged_logged_and_not_stored(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Over Socket Mode there is no HTTP status: an envelope whose payload Slack would never send is acknowledged
    (so it is not delivered again) and logged; the good envelope after it is stored."""
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
        server = ServerThread(bot.web_app()).start()
        try:
            with caplog.at_level(logging.INFO):
                bad = [
                    socket.send_event(mention("Ev_SOCKET_BAD_1") | {"event": None}),
                    socket.send_event(mention("Ev_SOCKET_BAD_2") | {"event": mention("x")["event"] | {"user": 5}}),
                ]
                good = socket.send_event(mention("Ev_SOCKET_GOOD"))
                wait_until(lambda: all(e in socket.acks for e in [*bad, good]), 30, "the acknowledgements")
                wait_until(lambda: bool(published), 10, "the good event's job published")
        finally:
            server.stop()
    with store.transaction() as session:
        assert session.get(ProcessedEvent, ("slack", "Ev_SOCKET_BAD_1")) is None
        assert session.get(ProcessedEvent, ("slack", "Ev_SOCKET_BAD_2")) is None
        assert session.get(ProcessedEvent, ("slack", "Ev_SOCKET_GOOD")) is not None
    assert len(published) == 1
    refusals = sorted(
        r.getMessage() for r in caplog.records if r.name == "bot.slack.socket_mode" and "refused" in r.getMessage()
    )
    assert refusals == sorted(
        [
            f"refused a Slack Socket Mode events_api envelope {bad[0]}: event is missing or not an object",
            f"refused a Slack Socket Mode events_api envelope {bad[1]}: event.user is not a string",
        ]
    )
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
