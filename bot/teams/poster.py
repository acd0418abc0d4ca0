"""The Bot Framework side of Teams, outbound: proactive replies into stored conversations.

`TeamsPoster` replies later, from a worker, through the stored reference (`continue_conversation` against the
reference's service URL; inside it the connector client's conversation operations are called directly, so a reply
goes to the stored message rather than to the synthetic continuation activity): one status message, updated in place
as rounds progress, then updated into the Adaptive Card answer (or, when no status message is known, the answer sent
as a new reply). Throttling and gateway errors (429, 412, 502, 504) are retried up to four tries with exponential
backoff and full jitter, honouring Retry-After, with this rule against duplicates:
- an update (PUT of a known activity id) is idempotent and is retried on those statuses and on transport errors;
- a send (POST of a new activity) is retried after 429 and 412, which the connector returns before it creates
  anything; after 502, 504 or a transport error the connector may already have created the message, so the send is
  not repeated and `TeamsDeliveryError.maybe_delivered` is set. A caller that holds a status activity therefore gets
  at most one answer, and one without gets at most one answer too, at the price of reporting an uncertain send.
  Any other 4xx answer means the connector refused the request and created nothing.
The bot's token is fetched before each request is made, in a thread (msal blocks): when Entra ID cannot be reached
or is overloaded it is tried again with the same backoff (nothing was sent, so a send may be repeated), and a token
that cannot be had is a `TeamsDeliveryError` like any other, never a crash of the caller. A 401 from the connector
drops the cached token, so the next attempt fetches a fresh one.
The SDK's own HTTP retry (which would repeat a POST) is switched off on every connector client used here.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from botbuilder.schema import (  # type: ignore[import-untyped]
    Activity,
    ActivityTypes,
    Attachment,
    ConversationReference,
    ErrorResponseException,
)
from botframework.connector.auth import AuthenticationConstants  # type: ignore[import-untyped]
from msrest.exceptions import ClientRequestError

from bot.entra import EntraTokenError
from bot.result_files import REFERENCE_KEY
from bot.teams.adapter import build_adapter
from bot.teams.cards import answer_card, answer_summary, card_attachment, status_text
from bot.teams.credentials import BotTokens
from core.answer.model import Answer
from core.config.settings import Settings
from core.errors import TablescoutError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 412, 502, 504})
REFUSED_BEFORE_CREATE = frozenset({429, 412})  # the connector created nothing: a send may be repeated
#: Answers after which repeating the request cannot help: a malformed activity, a bot removed from the conversation,
#: a conversation or message that no longer exists.
PERMANENT_STATUSES = frozenset({400, 403, 404})
MAX_TRIES = 4
MAX_RETRY_AFTER_S = 30.0


class TeamsDeliveryError(TablescoutError):
    """A message could not be posted to or updated in Teams.

    `status_code` is the connector's HTTP status (None for a transport or token error); `maybe_delivered` is True
    when a send failed in a way that does not tell whether Teams created the message, so repeating it could
    duplicate it; `permanent` is True when repeating it cannot succeed.
    """

    def __init__(self, message: str, *, status_code: int | None = None, maybe_delivered: bool = False) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.maybe_delivered = maybe_delivered
        self.permanent = status_code in PERMANENT_STATUSES


class TeamsPoster:
    """Proactive replies into stored Teams conversations: status messages and the Adaptive Card answer."""

    def __init__(
        self,
        settings: Settings,
        *,
        testing: bool = False,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
    ) -> None:
        self._tokens = BotTokens.from_settings(settings)
        self._adapter = build_adapter(settings, testing=testing, tokens=self._tokens)
        self._app_id = settings.teams_app_id or ""
        self._public_url = settings.public_url
        self._backoff_base_s = backoff_base_s
        self._backoff_max_s = backoff_max_s

    async def post_status(self, reference: Mapping[str, Any], text: str) -> str:
        """Send a status message as a reply in the referenced conversation; its activity id."""
        return await self._send(reference, Activity(type=ActivityTypes.message, text=status_text(text)))

    async def post_text(self, reference: Mapping[str, Any], text: str) -> str:
        """Send a short plain reply in the referenced conversation (e.g. what to ask when a mention held none)."""
        return await self._send(reference, Activity(type=ActivityTypes.message, text=text.strip()))

    async def update_status(self, reference: Mapping[str, Any], activity_id: str, text: str) -> None:
        """Replace the text of status message `activity_id`."""
        await self._update(reference, activity_id, Activity(type=ActivityTypes.message, text=status_text(text)))

    async def post_answer(self, reference: Mapping[str, Any], status_activity_id: str | None, answer: Answer) -> str:
        """Show the answer card: the status message becomes it when known, else it is sent as a new reply. Links to
        whole results point at TABLESCOUT_PUBLIC_URL, else at the address Teams reached the bot server by."""
        files_url = self._public_url or reference.get(REFERENCE_KEY)
        card = answer_card(answer, str(files_url) if files_url else None)
        activity = Activity(
            type=ActivityTypes.message,
            text="",
            summary=answer_summary(answer),
            # Teams' 👍/👎 under an answer that ran SQL (handled in process_inbound); none under a note's confirmation
            channel_data={"feedbackLoopEnabled": bool(answer.results)},
            attachments=[Attachment(**_attachment_fields(card_attachment(card))), *_chart_image(answer)],
        )
        if status_activity_id:
            await self._update(reference, status_activity_id, activity)
            return status_activity_id
        return await self._send(reference, activity)

    async def _send(self, reference: Mapping[str, Any], activity: Any) -> str:
        """POST the activity as a reply to the referenced message (or into the conversation when there is none)."""
        parsed = _parse_reference(reference)
        sent: list[str] = []

        async def callback(turn_context: Any) -> None:
            connector = self._connector(turn_context)
            outgoing = _addressed(activity, parsed)
            conversation = parsed.conversation.id
            if parsed.activity_id:
                outgoing.reply_to_id = parsed.activity_id
                response = await connector.conversations.reply_to_activity(conversation, parsed.activity_id, outgoing)
            else:
                response = await connector.conversations.send_to_conversation(conversation, outgoing)
            sent.append(str(response.id) if response is not None and response.id else "")

        await self._with_retries(parsed, callback, idempotent=False, what="send")
        if not sent[-1]:
            raise TeamsDeliveryError("Teams accepted the message but returned no activity id", maybe_delivered=True)
        return sent[-1]

    async def _update(self, reference: Mapping[str, Any], activity_id: str, activity: Any) -> None:
        """PUT the activity over message `activity_id` (idempotent)."""
        parsed = _parse_reference(reference)

        async def callback(turn_context: Any) -> None:
            connector = self._connector(turn_context)
            outgoing = _addressed(activity, parsed)
            outgoing.id = activity_id
            await connector.conversations.update_activity(parsed.conversation.id, activity_id, outgoing)

        await self._with_retries(parsed, callback, idempotent=True, what=f"update of {activity_id}")

    def _connector(self, turn_context: Any) -> Any:
        """This turn's connector client, with msrest's HTTP retry off: TeamsPoster decides what may be repeated."""
        client = turn_context.turn_state.get(self._adapter.BOT_CONNECTOR_CLIENT_KEY)
        if client is None:
            raise TeamsDeliveryError("the Bot Framework adapter gave no connector client for the conversation")
        policy = client.config.retry_policy
        policy.retries = 0
        policy.policy.status_forcelist = frozenset()
        policy.policy.respect_retry_after_header = False
        return client

    async def _with_retries(
        self,
        parsed: Any,
        callback: Callable[[Any], Awaitable[None]],
        *,
        idempotent: bool,
        what: str,
    ) -> None:
        for attempt in range(1, MAX_TRIES + 1):
            try:
                if self._tokens is not None:  # fetched (or read from the cache) here, so signing never blocks long
                    await asyncio.to_thread(self._tokens.token, AuthenticationConstants.TO_CHANNEL_FROM_BOT_OAUTH_SCOPE)
                await self._adapter.continue_conversation(parsed, callback, self._app_id)
                return
            except EntraTokenError as exc:  # nothing was sent: even a send may be tried again
                if not exc.transient or attempt == MAX_TRIES:
                    raise TeamsDeliveryError(f"no Bot Framework token for the {what}: {exc}") from exc
                delay = self._delay(attempt, None)
            except ErrorResponseException as exc:
                status = _status_of(exc)
                if status == 401 and self._tokens is not None:
                    self._tokens.forget()
                repeatable = status in (RETRY_STATUSES if idempotent else REFUSED_BEFORE_CREATE)
                if not repeatable or attempt == MAX_TRIES:
                    raise TeamsDeliveryError(
                        f"Teams refused the {what} (HTTP {status}) after {attempt} tries",
                        status_code=status,
                        maybe_delivered=not idempotent and (status is None or status >= 500),
                    ) from exc
                delay = self._delay(attempt, _retry_after(exc))
            except ClientRequestError as exc:
                if not idempotent or attempt == MAX_TRIES:
                    raise TeamsDeliveryError(
                        f"Teams could not be reached for the {what}: {exc}", maybe_delivered=not idempotent
                    ) from exc
                delay = self._delay(attempt, None)
            log.info("Teams %s: retrying in %.2f s (try %d of %d)", what, delay, attempt + 1, MAX_TRIES)
            await asyncio.sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, never sooner than the server's Retry-After."""
        ceiling = min(self._backoff_max_s, self._backoff_base_s * 2 ** (attempt - 1))
        jittered = random.uniform(0, ceiling)  # noqa: S311 - jitter, not security
        return max(jittered, min(retry_after, MAX_RETRY_AFTER_S)) if retry_after is not None else jittered


def _parse_reference(reference: Mapping[str, Any]) -> Any:
    try:
        parsed = ConversationReference().deserialize(dict(reference))
    except Exception as exc:
        raise TeamsDeliveryError(f"stored Teams conversation reference is unreadable: {exc}") from exc
    if parsed.conversation is None or not parsed.service_url:
        raise TeamsDeliveryError("stored Teams conversation reference lacks its conversation or service URL")
    return parsed


def _chart_image(answer: Answer) -> list[Any]:
    """The answer's chart as an inline image beside the card (a base64 data URI: the image exists only on the
    worker, with nowhere public to host it), or nothing. Teams' limit on a bot message's size counts the text and
    the card, not base64 images (Microsoft's "Format your bot messages"), so the 100 to 250 KB PNG travels beside a
    card kept under `bot.teams.result_table.CARD_BYTES`."""
    png = answer.chart.png() if answer.chart is not None else None
    if answer.chart is None or png is None:
        return []
    data = base64.b64encode(png).decode("ascii")
    return [Attachment(content_type="image/png", content_url=f"data:image/png;base64,{data}", name="chart.png")]


def _attachment_fields(attachment: Mapping[str, Any]) -> dict[str, Any]:
    return {"content_type": attachment["contentType"], "content": attachment["content"]}


def _addressed(activity: Any, reference: Any) -> Any:
    """A copy of `activity` addressed from the bot to the referenced conversation."""
    outgoing = copy.copy(activity)
    outgoing.channel_id = reference.channel_id
    outgoing.service_url = reference.service_url
    outgoing.conversation = reference.conversation
    outgoing.from_property = reference.bot
    outgoing.recipient = reference.user
    return outgoing


def _status_of(exc: Any) -> int | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return int(status) if status is not None else None


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
