"""What an inbound Bot Framework activity must look like before botbuilder reads it (SPEC §8).

msrest turns a field of the wrong type into a string or leaves it as it came, and botbuilder and bot/teams/activity.py
then read it as the schema says: a mention whose `mentioned` is a string made the turn raise (500, and Teams delivers
the activity again), a `serviceUrl` that is a number was stored as the address to reply to, a message without an id
was stored under the empty id, so the next one without an id counted as its redelivery and was lost. `check_activity`
checks the fields tablescout and botbuilder read, with the types of the Bot Framework schema; what fails is a
`MalformedBody` (bot/json_shape.py) with the reason, which the route answers with 400 and logs. Nothing is stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.json_shape import Kind, MalformedBody, check_fields, require_object, require_text

ACTIVITY_FIELDS: dict[str, Kind] = {
    "id": "text",
    "channelId": "text",
    "serviceUrl": "text",
    "from": "object",
    "recipient": "object",
    "conversation": "object",
    "text": "text",
    "textFormat": "text",
    "replyToId": "text",
    "name": "text",
    "locale": "text",
    "timestamp": "text",
    "localTimestamp": "text",
    "entities": "objects",
    "attachments": "objects",
    "channelData": "object",
}
ACCOUNT_FIELDS: dict[str, Kind] = {"id": "text", "name": "text", "aadObjectId": "text", "role": "text"}
CONVERSATION_FIELDS: dict[str, Kind] = {
    "id": "text",
    "name": "text",
    "conversationType": "text",
    "tenantId": "text",
    "isGroup": "flag",
}
MENTION_FIELDS: dict[str, Kind] = {"mentioned": "object", "text": "text"}
CHANNEL_DATA_FIELDS: dict[str, Kind] = {"tenant": "object", "channel": "object", "team": "object"}
#: Activities a user sends: they must say who sent them and under which id, the key that deduplicates them.
FROM_A_USER = frozenset({"message", "invoke"})


def check_activity(body: Mapping[str, Any]) -> None:
    """MalformedBody unless `body` has the fields of a Bot Framework activity that are read, with their types."""
    kind = require_text(body, "type")
    check_fields(body, ACTIVITY_FIELDS)
    service_url = require_text(body, "serviceUrl")
    if not service_url.startswith(("https://", "http://")):
        raise MalformedBody("serviceUrl is not an http(s) address")
    conversation = require_object(body, "conversation")
    require_text(conversation, "id", "conversation.")
    check_fields(conversation, CONVERSATION_FIELDS, "conversation.")
    for name in ("from", "recipient"):
        account = body.get(name)
        if isinstance(account, Mapping):
            check_fields(account, ACCOUNT_FIELDS, f"{name}.")
    if kind in FROM_A_USER:
        require_text(body, "id")
        require_text(require_object(body, "from"), "id", "from.")
    for entity in body.get("entities") or ():
        if require_text(entity, "type", "entities[].") == "mention":  # botbuilder lower-cases every entity's type
            check_fields(entity, MENTION_FIELDS, "entities[].")
            check_fields(entity.get("mentioned") or {}, ACCOUNT_FIELDS, "entities[].mentioned.")
    channel_data = body.get("channelData") or {}
    check_fields(channel_data, CHANNEL_DATA_FIELDS, "channelData.")
    for name in CHANNEL_DATA_FIELDS:
        check_fields(channel_data.get(name) or {}, {"id": "text", "name": "text"}, f"channelData.{name}.")
