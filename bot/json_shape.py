"""Checking the shape of a JSON body a chat platform sent before an SDK reads it (bot/slack/request_checks.py,
bot/teams/activity_shape.py): the SDKs and our listeners read fields assuming the types the platform documents, and a
body of another shape would make them raise, which answers 500 and has the platform deliver it again and again.

`MalformedBody` says, in plain words, what is wrong; the routes answer it with 400 and log it, and nothing is stored.
Only what is read is checked, so fields a platform adds later pass.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

#: Nesting levels a body may have; the deepest Slack and Teams send (rich text, a modal's state, an Adaptive Card
#: submission) use about ten.
MAX_DEPTH = 64

Kind = Literal["text", "object", "objects", "text or object", "flag"]

_ARTICLE: dict[Kind, str] = {
    "text": "a string",
    "object": "an object",
    "objects": "a list of objects",
    "text or object": "a string or an object",
    "flag": "true or false",
}


class MalformedBody(ValueError):
    """A body that is not one the platform sends; the message says what is wrong with it."""


def json_object(raw: str | bytes, what: str) -> dict[str, Any]:
    """`raw` parsed as a JSON object of at most MAX_DEPTH levels; MalformedBody otherwise."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedBody(f"{what} is not UTF-8 text") from None
    if not raw.strip():
        raise MalformedBody(f"{what} is empty")
    try:
        parsed = json.loads(raw)
    except RecursionError:
        raise MalformedBody(f"{what} is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:
        raise MalformedBody(f"{what} is not valid JSON") from None
    if not isinstance(parsed, dict):
        raise MalformedBody(f"{what} is not a JSON object")
    check_depth(parsed, what)
    return parsed


def check_depth(value: object, what: str) -> None:
    """MalformedBody when `value` nests more than MAX_DEPTH levels (walked without recursion)."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise MalformedBody(f"{what} is nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, Mapping):
            pending.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            pending.extend((v, depth + 1) for v in item)


def check_fields(obj: Mapping[str, Any], fields: Mapping[str, Kind], where: str = "") -> None:
    """MalformedBody when a field of `fields` is present (and not null) in `obj` with another type."""
    for name, kind in fields.items():
        value = obj.get(name)
        if value is not None and not _is(value, kind):
            raise MalformedBody(f"{where}{name} is not {_ARTICLE[kind]}")


def require_text(obj: Mapping[str, Any], name: str, where: str = "") -> str:
    """The non-empty string field `name` of `obj`; MalformedBody when it is missing or not one."""
    value = obj.get(name)
    if not isinstance(value, str) or not value:
        raise MalformedBody(f"{where}{name} is missing or not a string")
    return value


def require_object(obj: Mapping[str, Any], name: str, where: str = "") -> Mapping[str, Any]:
    """The object field `name` of `obj`; MalformedBody when it is missing or not one."""
    value = obj.get(name)
    if not isinstance(value, Mapping):
        raise MalformedBody(f"{where}{name} is missing or not an object")
    return value


def _is(value: object, kind: Kind) -> bool:
    if kind == "text":
        return isinstance(value, str)
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "objects":
        return isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(v, Mapping) for v in value)
    if kind == "text or object":
        return isinstance(value, str | Mapping)
    return isinstance(value, bool | str)
