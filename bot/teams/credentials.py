"""The bot's own credentials for the Bot Framework connector: tokens from the configured Entra ID authority.

botbuilder's password credentials build their msal client with instance discovery on, so an authority other than
Microsoft's public hosts is first looked up at login.microsoftonline.com (with its port dropped): a national cloud
behind a proxy, an air-gapped authority or a test server never gets asked, and the lookup's connection error
escapes as a bare exception. `BotCredentialsFactory` takes their place in the adapter: it has the three methods
botbuilder's `ServiceClientCredentialsFactory` has, and the credentials it makes have the `signed_session` of
msrest's `Authentication`, so the connector client signs each request with a token from `BotTokens`, which asks
only `{TABLESCOUT_ENTRA_LOGIN_URL}/{TABLESCOUT_TEAMS_TENANT_ID or botframework.com}` (see `bot.entra`). A token
that cannot be had raises `EntraTokenError` before anything is sent, which the poster treats as a delivery failure.
"""

from __future__ import annotations

from typing import Any

import requests

from bot.entra import EntraApp
from core.config.settings import Settings

#: The tenant a multi-tenant bot's tokens come from (botbuilder's DEFAULT_CHANNEL_AUTH_TENANT).
MULTI_TENANT_AUTHORITY_TENANT = "botframework.com"
#: Seconds one request to the authority may take.
TOKEN_TIMEOUT_S = 10.0


def bot_authority(settings: Settings) -> str:
    """The authority the bot's tokens come from: the login URL and the bot's tenant (or botframework.com)."""
    return f"{settings.entra_login_url.rstrip('/')}/{settings.teams_tenant_id or MULTI_TENANT_AUTHORITY_TENANT}"


def scope_of(audience: str) -> str:
    """The `.default` scope of a resource such as https://api.botframework.com."""
    return audience if audience.endswith("/.default") else f"{audience.rstrip('/')}/.default"


class BotTokens:
    """The bot app's access tokens, one msal client (and its token cache) for the process."""

    def __init__(self, app_id: str, password: str, authority: str, *, timeout_s: float = TOKEN_TIMEOUT_S) -> None:
        self.app_id = app_id
        self._app = EntraApp(app_id, password, authority, timeout_s=timeout_s)

    @classmethod
    def from_settings(cls, settings: Settings) -> BotTokens | None:
        """None without an app id and password (the Emulator's unauthenticated mode)."""
        if not settings.teams_app_id or not settings.teams_app_password:
            return None
        return cls(settings.teams_app_id, settings.teams_app_password.get_secret_value(), bot_authority(settings))

    @property
    def authority(self) -> str:
        return self._app.authority

    def token(self, audience: str) -> str:
        """A token for `audience` (cached until shortly before it expires); EntraTokenError when there is none."""
        return self._app.token(scope_of(audience))

    def forget(self) -> None:
        """Drop cached tokens, after the connector refused one."""
        self._app.forget()


class BotCredentials:
    """What the connector client signs requests with (msrest's `Authentication` interface)."""

    def __init__(self, tokens: BotTokens | None, audience: str) -> None:
        self.tokens = tokens
        self.microsoft_app_id = tokens.app_id if tokens is not None else ""
        self.oauth_scope = audience

    def get_access_token(self, force_refresh: bool = False) -> str:
        if self.tokens is None:
            return ""
        if force_refresh:
            self.tokens.forget()
        return self.tokens.token(self.oauth_scope)

    def signed_session(self, session: Any = None) -> Any:
        if session is None:
            session = requests.Session()
        if self.tokens is None:
            session.headers.pop("Authorization", None)
        else:
            session.headers["Authorization"] = f"Bearer {self.get_access_token()}"
        return session

    def refresh_session(self, session: Any = None) -> Any:
        if self.tokens is not None:
            self.tokens.forget()
        return self.signed_session(session)


class BotCredentialsFactory:
    """botbuilder's credential factory for the adapter: credentials for the configured app id only."""

    def __init__(self, tokens: BotTokens | None) -> None:
        self.tokens = tokens
        self.app_id = tokens.app_id if tokens is not None else ""

    async def is_valid_app_id(self, app_id: str) -> bool:
        return app_id == self.app_id

    async def is_authentication_disabled(self) -> bool:
        return not self.app_id

    async def create_credentials(
        self, app_id: str, oauth_scope: str, login_endpoint: str, validate_authority: bool
    ) -> BotCredentials:
        # login_endpoint and validate_authority are botbuilder's view of the cloud; the authority is the settings'.
        if self.tokens is None:
            return BotCredentials(None, oauth_scope)
        if app_id != self.app_id:
            raise PermissionError(f"no credentials for app id {app_id!r}: this bot is {self.app_id}")
        return BotCredentials(self.tokens, oauth_scope)
