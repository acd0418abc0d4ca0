"""The Bot Framework side of Teams, inbound: the adapter and reading inbound activities. Replies go out through
bot/teams/poster.py; botbuilder is imported only under bot/teams/ (SPEC §1).

`build_adapter(settings, testing=...)` makes a botbuilder `CloudAdapter` whose authentication comes from the
settings: the app id, password and (for a single-tenant bot) tenant; the bot's own tokens come from the Entra ID
authority at TABLESCOUT_ENTRA_LOGIN_URL and nowhere else (bot/teams/credentials.py). Every inbound activity's JWT is
validated against the Bot Framework's signing keys whenever an app id is configured; without an app id the adapter
is only built in testing mode, where it accepts unauthenticated activities (the Bot Framework Emulator's mode), so an
installation can never run with validation silently off. `process_inbound(adapter, body, auth_header, on_message)`
authenticates one request (any failure becomes `PermissionError` with a one-line reason, which the HTTP route
answers with 401), runs the adapter's turn and hands a message activity to `on_message` as a plain `TeamsMessage`
(bot/teams/activity.py): the text with the bot's own mention removed, the ids needed to deduplicate and thread it,
and the serialized conversation reference to store for the reply.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from botbuilder.core import InvokeResponse, TurnContext  # type: ignore[import-untyped]
from botbuilder.integration.aiohttp import (  # type: ignore[import-untyped]
    CloudAdapter,
    ConfigurationBotFrameworkAuthentication,
)
from botbuilder.schema import Activity, ActivityTypes, CallerIdConstants  # type: ignore[import-untyped]
from botframework.connector.auth import AuthenticationConstants  # type: ignore[import-untyped]

from bot.json_shape import MalformedBody
from bot.teams.activity import (
    TeamsFeedback,
    TeamsMessage,
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
from bot.teams.credentials import BotCredentialsFactory, BotTokens
from core.config.settings import Settings
from core.errors import ConfigError

log = logging.getLogger(__name__)

_SPACES = re.compile(r"[ \t\u00a0]+")


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
