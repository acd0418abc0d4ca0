"""What a Slack request must be before bolt reads it (SPEC §8): signed, and of a shape Slack sends (the body of a
request to /slack/events, the payload of a Socket Mode envelope).

`signature_valid` checks Slack's v0 signature on the bytes as they came, at most five minutes old, as bolt does, but
on bytes, so a signed body that is not UTF-8 is told apart from an unsigned one (slack_sdk's verifier decodes first).

bolt parses a body and reads fields out of it (the team, the user, the enterprise, the event) assuming the shapes
Slack sends, and so do our listeners: a body of another shape made them raise, which answered 500 and had Slack
deliver the same body again. `slack_body` checks a body first: UTF-8 text, a JSON object (or a form whose `payload`
is one) at most MAX_DEPTH levels deep, and, through `check_payload`, the fields bolt and tablescout read, with the
types Slack gives them. What fails is a `MalformedBody` (bot/json_shape.py) with the reason, which the caller
answers with 400 and logs; nothing is stored. An event of a type tablescout does not handle is let through for
bolt to acknowledge and ignore.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

from bot.json_shape import Kind, MalformedBody, check_depth, check_fields, json_object, require_object, require_text

#: Seconds a request's signature stays valid (Slack's, and bolt's, five minutes).
SIGNATURE_MAX_AGE_S = 300

#: Fields of any request, where present.
TOP_FIELDS: dict[str, Kind] = {
    "token": "text",
    "team_id": "text",
    "api_app_id": "text",
    "enterprise_id": "text",
    "enterprise": "text or object",
    "is_enterprise_install": "flag",
    "authorizations": "objects",
    "event_id": "text",
    "trigger_id": "text",
    "response_url": "text",
    "callback_id": "text",
}
AUTHORIZATION_FIELDS: dict[str, Kind] = {"team_id": "text", "user_id": "text", "enterprise_id": "text"}
#: Interactive payloads (buttons, shortcuts, modals): who, where, on which message.
INTERACTIVE_TYPES = frozenset(
    {"block_actions", "message_action", "shortcut", "view_submission", "view_closed", "block_suggestion"}
)
INTERACTIVE_FIELDS: dict[str, Kind] = {
    "user": "object",
    "team": "object",
    "channel": "object",
    "message": "object",
    "container": "object",
    "actions": "objects",
    "view": "object",
}
NESTED_FIELDS: dict[str, dict[str, Kind]] = {
    "user": {"id": "text", "team_id": "text"},
    "team": {"id": "text", "enterprise_id": "text"},
    "channel": {"id": "text"},
    "message": {"ts": "text", "thread_ts": "text", "text": "text"},
    "container": {"message_ts": "text", "channel_id": "text", "thread_ts": "text"},
    "view": {"id": "text", "type": "text", "callback_id": "text", "private_metadata": "text", "state": "object"},
}
ACTION_FIELDS: dict[str, Kind] = {"action_id": "text", "block_id": "text", "value": "text"}
#: Message events tablescout turns into questions, and the fields it reads from them.
MESSAGE_EVENTS = frozenset({"app_mention", "message"})
MESSAGE_FIELDS: dict[str, Kind] = {
    "user": "text",
    "text": "text",
    "channel": "text",
    "channel_type": "text",
    "ts": "text",
    "thread_ts": "text",
    "event_ts": "text",
    "subtype": "text",
    "bot_id": "text",
    "team": "text",
}
ASSISTANT_EVENTS = frozenset({"assistant_thread_started", "assistant_thread_context_changed"})
ASSISTANT_THREAD_FIELDS: dict[str, Kind] = {
    "user_id": "text",
    "channel_id": "text",
    "thread_ts": "text",
    "context": "object",
}


def header(headers: Mapping[str, Sequence[str]], name: str) -> str | None:
    """The first value of header `name` (any case), or None."""
    values = next((v for key, v in headers.items() if key.lower() == name.lower()), ())
    return next(iter(values), None)


def signature_valid(secret: str, raw: bytes, headers: Mapping[str, Sequence[str]]) -> bool:
    """Whether `raw` carries Slack's v0 signature with `secret`, made at most SIGNATURE_MAX_AGE_S ago."""
    timestamp = header(headers, "x-slack-request-timestamp") or ""
    signature = header(headers, "x-slack-signature") or ""
    if not secret or not timestamp.isdigit() or abs(time.time() - int(timestamp)) > SIGNATURE_MAX_AGE_S:
        return False
    expected = "v0=" + hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


def slack_body(raw: bytes, content_type: str | None) -> str:
    """`raw` as the text bolt reads, when it is a body Slack could have sent; MalformedBody otherwise.

    A form without `payload` (a slash command, Slack's SSL check) is passed on as it is, for bolt to answer."""
    if not raw.strip():
        raise MalformedBody("the body is empty")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedBody("the body is not UTF-8 text") from None
    mime = (content_type or "").split(";")[0].strip().lower()
    if mime == "application/json" or text.lstrip().startswith(("{", "[")):
        payload = json_object(text, "the body")
    else:
        form = dict(parse_qsl(text, keep_blank_values=True))
        if "payload" not in form:
            if "command" in form or "ssl_check" in form:
                return text
            raise MalformedBody("the body is neither JSON nor a form with a payload")
        payload = json_object(form["payload"], "the form's payload")
    check_payload(payload)
    return text


def check_payload(payload: object) -> None:
    """MalformedBody unless `payload` (a parsed body, a Socket Mode envelope's payload) has the shapes bolt and
    tablescout read."""
    if not isinstance(payload, Mapping):
        raise MalformedBody("the payload is not a JSON object")
    check_depth(payload, "the payload")
    kind = require_text(payload, "type")
    check_fields(payload, TOP_FIELDS)
    for item in payload.get("authorizations") or ():
        check_fields(item, AUTHORIZATION_FIELDS, "authorizations[].")
    if kind == "url_verification":
        require_text(payload, "challenge")
    elif kind == "event_callback":
        require_text(payload, "event_id")
        _check_event(require_object(payload, "event"))
    elif kind in INTERACTIVE_TYPES:
        _check_interactive(kind, payload)


def _check_event(event: Mapping[str, Any]) -> None:
    kind = require_text(event, "type", "event.")
    if kind in MESSAGE_EVENTS:
        check_fields(event, MESSAGE_FIELDS, "event.")
    elif kind in ASSISTANT_EVENTS:
        check_fields(event, {"user": "text", "channel": "text"}, "event.")
        thread = require_object(event, "assistant_thread", "event.")
        check_fields(thread, ASSISTANT_THREAD_FIELDS, "event.assistant_thread.")
        for name in ("channel_id", "thread_ts"):  # what bolt's Assistant replies with
            require_text(thread, name, "event.assistant_thread.")
        if "context" in thread:  # bolt reads it as an object whenever it is there, null included
            require_object(thread, "context", "event.assistant_thread.")
        context = thread.get("context") or {}
        check_fields(context, dict.fromkeys(context, "text"), "event.assistant_thread.context.")


def _check_interactive(kind: str, payload: Mapping[str, Any]) -> None:
    check_fields(payload, INTERACTIVE_FIELDS)
    for name, fields in NESTED_FIELDS.items():
        value = payload.get(name)
        if isinstance(value, Mapping):
            check_fields(value, fields, f"{name}.")
    if kind == "block_actions":
        if not payload.get("actions"):
            raise MalformedBody("actions is missing or empty")
        for action in payload["actions"]:
            check_fields(action, ACTION_FIELDS, "actions[].")
    if kind in ("view_submission", "view_closed"):
        require_text(require_object(payload, "view"), "type", "view.")
    state = (payload.get("view") or {}).get("state") or {}
    values = state.get("values")
    if values is not None and not (
        isinstance(values, Mapping)
        and all(isinstance(b, Mapping) and all(isinstance(a, Mapping) for a in b.values()) for b in values.values())
    ):
        raise MalformedBody("view.state.values is not an object of blocks and their actions")
