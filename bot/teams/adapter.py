"""The Bot Framework side of Teams: the adapter, reading inbound activities, and proactive replies.

The only module that imports botbuilder/botframework (SPEC §1).

Inbound. `build_adapter(settings, testing=...)` makes a botbuilder `CloudAdapter` whose authentication comes from
the settings: the app id, password and (for a single-tenant bot) tenant; the bot's own tokens come from the Entra
ID authority at TABLESCOUT_ENTRA_LOGIN_URL and nowhere else (bot/teams/credentials.py). Every inbound activity's
JWT is validated against the Bot Framework's signing keys whenever an app id is configured; without an app id the
adapter is only built in testing mode, where it accepts unauthenticated activities (the Bot Framework Emulator's
mode), so an installation can never run with validation silently off. `process_inbound(adapter, body,
auth_header, on_message)` authenticates one request (any failure becomes `PermissionError` with a one-line reason,
which the HTTP route answers with 401), runs the adapter's turn and hands a message activity to `on_message` as a
plain `TeamsMessage` (bot/teams/activity.py): the text with the bot's own mention removed, the ids needed to
deduplicate and thread it, and the serialized conversation reference to store for the reply.

Outbound. `TeamsPoster` replies later, from a worker, through the stored reference (`continue_conversation`
against the reference's service URL; inside it the connector client's conversation operations are called directly,
so a reply goes to the stored message rather than to the synthetic continuation activity): one status message,
updated in place as rounds progress, then updated into the Adaptive Card answer (or, when no status message is
known, the answer sent as a new reply). Throttling and gateway errors (429, 412, 502, 504) are retried up to four
tries with exponential backoff and full jitter, honouring Retry-After, with this rule against duplicates:
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
import copy
import logging
import random
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from botbuilder.core import InvokeResponse, TurnContext  # type: ignore[import-untyped]
from botbuilder.integration.aiohttp import (  # type: ignore[import-untyped]
    CloudAdapter,
    ConfigurationBotFrameworkAuthentication,
)
from botbuilder.schema import (  # type: ignore[import-untyped]
    Activity,
    ActivityTypes,
    Attachment,
    CallerIdConstants,
    ConversationReference,
    ErrorResponseException,
)
from botframework.connector.auth import AuthenticationConstants  # type: ignore[import-untyped]
from msrest.exceptions import ClientRequestError

from bot.entra import EntraTokenError
from bot.json_shape import MalformedBody
from bot.teams.activity import TeamsFeedback as TeamsFeedback
from bot.teams.activity import TeamsMessage as TeamsMessage  # re-exported: the server and tests take it from here
from bot.teams.activity import (
    activity_id,
    conversation_id,
    feedback_of,
    is_personal,
    refusal_reason,
    tenant_id,
    thread_id,
    user_aad_object_id,
)
from bot.teams.activity_shape import check_activity
from bot.teams.cards import answer_card, answer_summary, card_attachment, status_text
from bot.teams.credentials import BotCredentialsFactory, BotTokens
from core.answer.model import Answer
from core.config.settings import Settings
from core.errors import ConfigError, TablescoutError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 412, 502, 504})
REFUSED_BEFORE_CREATE = frozenset({429, 412})  # the connector created nothing: a send may be repeated
#: Answers after which repeating the request cannot help: a malformed activity, a bot removed from the conversation,
#: a conversation or message that no longer exists.
PERMANENT_STATUSES = frozenset({400, 403, 404})
MAX_TRIES = 4
MAX_RETRY_AFTER_S = 30.0

_SPACES = re.compile(r"[ \t\u00a0]+")


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


class _AdapterConfig:
    """The attribute names botbuilder's ConfigurationBotFrameworkAuthentication reads."""

    def __init__(self, settings: Settings) -> None:
        self.APP_ID = settings.teams_app_id or ""
        self.APP_PASSWORD = settings.teams_app_password.get_secret_value() if settings.teams_app_password else ""
        self.APP_TENANTID = settings.teams_tenant_id or ""
        self.APP_TYPE = "SingleTenant" if self.APP_TENANTID else "MultiTenant"
        if settings.teams_openid_metadata_url:
            # Another source of the channel's signing keys (a national cloud, a proxy, tests): botbuilder then takes
            # every endpoint from here, so the others keep the public cloud's values, with Entra at the configured
            # login address for the bot's own tokens.
            login = settings.entra_login_url.rstrip("/")
            tenant = self.APP_TENANTID or AuthenticationConstants.DEFAULT_CHANNEL_AUTH_TENANT
            self.TO_BOT_FROM_CHANNEL_OPENID_METADATA_URL = settings.teams_openid_metadata_url
            self.TO_BOT_FROM_EMULATOR_OPENID_METADATA_URL = (
                AuthenticationConstants.TO_BOT_FROM_EMULATOR_OPENID_METADATA_URL
            )
            self.TO_BOT_FROM_CHANNEL_TOKEN_ISSUER = AuthenticationConstants.TO_BOT_FROM_CHANNEL_TOKEN_ISSUER
            self.TO_CHANNEL_FROM_BOT_LOGIN_URL = f"{login}/{tenant}"
            self.TO_CHANNEL_FROM_BOT_OAUTH_SCOPE = AuthenticationConstants.TO_CHANNEL_FROM_BOT_OAUTH_SCOPE
            self.OAUTH_URL = AuthenticationConstants.OAUTH_URL
            self.CALLER_ID = CallerIdConstants.public_azure_channel


def build_adapter(settings: Settings, *, testing: bool, tokens: BotTokens | None = None) -> Any:
    """A botbuilder CloudAdapter for `settings`; ConfigError when inbound validation could not be on.

    Outside testing an app id and its password are required (the JWT of every inbound activity is then validated);
    in testing mode an empty app id gives an adapter that accepts unauthenticated activities. `tokens` (made from
    the settings when not given) signs what the adapter sends.
    """
    config = _AdapterConfig(settings)
    if not config.APP_ID and not testing:
        raise ConfigError(
            "Teams needs TABLESCOUT_TEAMS_APP_ID (and TABLESCOUT_TEAMS_APP_PASSWORD): without an app id inbound "
            "activities could not be authenticated, so the Teams adapter is not started"
        )
    if config.APP_ID and not config.APP_PASSWORD:
        raise ConfigError("TABLESCOUT_TEAMS_APP_ID is set but TABLESCOUT_TEAMS_APP_PASSWORD is empty")
    factory = BotCredentialsFactory(tokens if tokens is not None else BotTokens.from_settings(settings))
    try:
        authentication = ConfigurationBotFrameworkAuthentication(config, credentials_factory=factory)
    except Exception as exc:  # botbuilder raises bare Exception for an incomplete configuration
        raise ConfigError(f"invalid Teams app configuration: {exc}") from exc
    return CloudAdapter(authentication)


def parse_activity(body: Mapping[str, Any]) -> Any:
    """A botbuilder Activity from the JSON body of an inbound request."""
    return Activity().deserialize(dict(body))


def mention_text(activity: Any, bot_id: str) -> str:
    """The activity's text without the mention of `bot_id`, whitespace tidied; other mentions are kept."""
    text = str(activity.text or "")
    for mention in TurnContext.get_mentions(activity):
        props = mention.additional_properties or {}
        mentioned = props.get("mentioned") or {}
        if mentioned.get("id") != bot_id:
            continue
        tag = props.get("text") or f"<at>{mentioned.get('name') or ''}</at>"
        text = text.replace(tag, " ")
    lines = [_SPACES.sub(" ", line).strip() for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip()


def conversation_reference(activity: Any) -> dict[str, Any]:
    """The JSON-ready conversation reference of an inbound activity; replies go to its thread."""
    reference = TurnContext.get_conversation_reference(activity)
    serialized: dict[str, Any] = reference.serialize()
    return serialized


def teams_message(activity: Any) -> TeamsMessage:
    """The plain data of a message activity."""
    sender = activity.from_property
    bot_id = str(activity.recipient.id) if activity.recipient is not None else ""
    return TeamsMessage(
        activity_id=activity_id(activity),
        conversation_id=conversation_id(activity),
        thread_id=thread_id(activity),
        personal=is_personal(activity),
        user_id=str(sender.id) if sender is not None else "",
        user_aad_object_id=user_aad_object_id(activity),
        user_name=str(sender.name) if sender is not None and sender.name else None,
        tenant_id=tenant_id(activity),
        text=mention_text(activity, bot_id),
        raw_text=str(activity.text or ""),
        reference=conversation_reference(activity),
    )


async def process_inbound(
    adapter: Any,
    body: Mapping[str, Any],
    auth_header: str,
    on_message: Callable[[TeamsMessage], Awaitable[None]],
    on_feedback: Callable[[TeamsFeedback], Awaitable[None]] | None = None,
) -> TeamsMessage | None:
    """Authenticate and run one inbound activity; a message activity goes to `on_message`.

    Returns the message handed on (None for other activity types, such as conversation updates). Raises
    PermissionError when the request is not authenticated (missing, malformed, wrongly issued or unverifiable
    token) and ValueError (MalformedBody, bot/teams/activity_shape.py) when the body is not an activity of the
    schema's shape, before anything else is done; errors from `on_message` propagate unchanged.
    """
    try:
        check_activity(body)
    except MalformedBody as exc:
        raise MalformedBody(f"not a Bot Framework activity: {exc}") from None
    try:
        activity = parse_activity(body)
    except Exception as exc:  # msrest raises its own DeserializationError, naming its internals
        log.info("Teams activity unreadable: %s: %s", type(exc).__name__, exc)
        raise ValueError("not a Bot Framework activity: a field has a type the activity schema does not allow") from exc
    try:
        authenticated = await adapter.bot_framework_authentication.authenticate_request(activity, auth_header or "")
    except Exception as exc:
        log.info("Teams activity refused: %s: %s", type(exc).__name__, exc)
        raise PermissionError(f"Teams activity not authenticated: {refusal_reason(auth_header)}") from exc
    handed: list[TeamsMessage] = []

    async def logic(turn_context: Any) -> None:
        incoming = turn_context.activity
        if incoming.type == ActivityTypes.message:
            message = teams_message(incoming)
            handed.append(message)
            await on_message(message)
            return
        feedback = feedback_of(incoming)
        if feedback is not None and on_feedback is not None:
            await on_feedback(feedback)
            await turn_context.send_activity(
                Activity(type=ActivityTypes.invoke_response, value=InvokeResponse(status=200, body={}))
            )

    await adapter.process_activity(authenticated, activity, logic)
    return handed[0] if handed else None


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
        """Show the answer card: the status message becomes it when known, else it is sent as a new reply."""
        activity = Activity(
            type=ActivityTypes.message,
            text="",
            summary=answer_summary(answer),
            channel_data={"feedbackLoopEnabled": True},  # Teams' 👍/👎 under the answer (handled in process_inbound)
            attachments=[Attachment(**_attachment_fields(card_attachment(answer_card(answer))))],
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
