"""The plain data of a Teams activity: the ids a stored turn needs, read from botbuilder's Activity objects (or any
object with the same attributes), and the words a refused activity is answered with. No SDK import: the adapter
hands the activities in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_MESSAGE_ID = re.compile(r";messageid=(?P<id>[^;]+)")


@dataclass(frozen=True)
class TeamsMessage:
    """A Teams message activity, as plain data for storing a turn.

    `text` has the bot's mention removed (other markup, such as other people's `<at>` tags, stays for
    `bot.messages.parse_message`); `reference` is the JSON-ready conversation reference for the reply.
    """

    activity_id: str
    conversation_id: str
    thread_id: str | None
    personal: bool
    user_id: str
    user_aad_object_id: str | None
    user_name: str | None
    tenant_id: str | None
    text: str
    raw_text: str
    reference: dict[str, Any]


def activity_id(activity: Any) -> str:
    return str(activity.id or "")


def conversation_id(activity: Any) -> str:
    """The conversation id without a channel thread's `;messageid=` suffix."""
    raw = str(activity.conversation.id if activity.conversation else "")
    return raw.split(";", 1)[0]


def thread_id(activity: Any) -> str | None:
    """The id of the channel thread's root message: from the conversation id, else the activity replied to."""
    raw = str(activity.conversation.id if activity.conversation else "")
    found = _MESSAGE_ID.search(raw)
    if found:
        return found.group("id")
    return str(activity.reply_to_id) if activity.reply_to_id else None


def user_aad_object_id(activity: Any) -> str | None:
    sender = activity.from_property
    return str(sender.aad_object_id) if sender is not None and sender.aad_object_id else None


def is_personal(activity: Any) -> bool:
    """True for a one-to-one chat with the bot."""
    conversation = activity.conversation
    return conversation is not None and conversation.conversation_type == "personal"


def tenant_id(activity: Any) -> str | None:
    conversation = activity.conversation
    if conversation is not None and conversation.tenant_id:
        return str(conversation.tenant_id)
    data = activity.channel_data if isinstance(activity.channel_data, Mapping) else {}
    tenant = data.get("tenant") or {}
    return str(tenant["id"]) if isinstance(tenant, Mapping) and tenant.get("id") else None


def refusal_reason(auth_header: str) -> str:
    """Why an activity was refused, in words that do not depend on botbuilder's internals (the log has those)."""
    scheme, _, token = (auth_header or "").strip().partition(" ")
    if not scheme:
        return "the request has no Authorization header with the Bot Framework's bearer token"
    if scheme.lower() != "bearer" or not token.strip():
        return "the Authorization header is not a bearer token"
    return "the bearer token is not a valid Bot Framework token for this bot (signature, issuer, audience or expiry)"


FEEDBACK_INVOKE = "message/submitAction"  # Teams' AI feedback loop (channelData.feedbackLoopEnabled on the answer)
REACTIONS = {"like": "good", "dislike": "bad"}


@dataclass(frozen=True)
class TeamsFeedback:
    """A 👍/👎 from Teams' feedback loop on one of our answers (`message_id`), with the text of its form."""

    conversation_id: str
    message_id: str
    user_id: str
    rating: str
    reason: str


def feedback_of(activity: Any) -> TeamsFeedback | None:
    """The feedback an invoke activity carries (`message/submitAction`, action `feedback`); None for any other."""
    if activity.type != "invoke" or activity.name != FEEDBACK_INVOKE or not isinstance(activity.value, Mapping):
        return None
    if activity.value.get("actionName") != "feedback":
        return None
    action = activity.value.get("actionValue")
    action = action if isinstance(action, Mapping) else {}
    rating = REACTIONS.get(str(action.get("reaction") or ""))
    if rating is None or not activity.reply_to_id:
        return None
    reason = ""
    form = action.get("feedback")
    try:  # Teams sends its feedback form as a JSON string: {"feedbackText": "..."}
        parsed = json.loads(form) if isinstance(form, str) else form
    except ValueError:
        parsed = {"feedbackText": form}
    if isinstance(parsed, Mapping):
        reason = str(parsed.get("feedbackText") or "")
    sender = activity.from_property
    user = user_aad_object_id(activity) or (str(sender.id) if sender is not None else "")
    return TeamsFeedback(conversation_id(activity), str(activity.reply_to_id), user, rating, reason)
