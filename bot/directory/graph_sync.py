"""Microsoft Entra ID groups and their members through Microsoft Graph, for Teams users.

The Teams app's own credentials (TABLESCOUT_TEAMS_APP_ID, TABLESCOUT_TEAMS_APP_PASSWORD) get an application token from
the tenant's authority (`{TABLESCOUT_ENTRA_LOGIN_URL}/{TABLESCOUT_TEAMS_TENANT_ID}`, client-credentials flow); the app
needs the Graph application permissions GroupMember.Read.All and User.Read.All with admin consent (User.Read.All for the
profile properties that become user attributes: department, city, country, employeeId, officeLocation, jobTitle,
onPremisesExtensionAttributes ...; with User.ReadBasic.All alone Graph leaves them out and row filters that need them
match nothing). Every group is read with its transitive user members and their attributes (members of nested groups
count), following `@odata.nextLink` pages; 429, 503 and 504 answers are retried after their Retry-After (or a growing
pause). Users are keyed by their Entra object id, the id a Teams activity carries as `from.aadObjectId`.

The token comes through `bot.entra` (msal), which asks only the configured authority, over HTTPS; a private certificate
authority (a proxy, a test server) is trusted through the standard REQUESTS_CA_BUNDLE variable.
"""

from __future__ import annotations

import email.utils
import logging
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

import httpx2

from bot.directory import attributes
from bot.directory.errors import DirectorySyncError
from bot.directory.snapshot import DirectorySnapshot, GroupEntry, UserEntry
from bot.entra import EntraApp, EntraTokenError, TokenRefusal
from core.config.settings import Settings

log = logging.getLogger(__name__)

PLATFORM = "teams"
GRAPH_PERMISSIONS = "GroupMember.Read.All and User.Read.All"
REQUEST_TIMEOUT_S = 30.0
#: Attempts per Graph request when it answers 429, 503 or 504 (or the connection fails).
MAX_ATTEMPTS = 6
#: Attempts at the Graph token when the authority is unreachable, overloaded or garbled.
TOKEN_ATTEMPTS = 3
#: Attempts per Graph request when the connection itself fails.
MAX_TRANSPORT_ATTEMPTS = 3
#: The longest single wait, whatever Retry-After asks for.
MAX_WAIT_S = 120.0
_RETRY_STATUSES = frozenset({429, 503, 504})
_PAGE_SIZE = 999  # Graph's largest page for groups and members


def missing_credentials(settings: Settings) -> list[str]:
    """The Teams settings a Graph sync needs that are not set."""
    wanted = {
        "TABLESCOUT_TEAMS_APP_ID": settings.teams_app_id,
        "TABLESCOUT_TEAMS_APP_PASSWORD": settings.teams_app_password,
        "TABLESCOUT_TEAMS_TENANT_ID": settings.teams_tenant_id,
    }
    return [name for name, value in wanted.items() if not value]


def graph_scope(settings: Settings) -> str:
    """The `.default` scope of the Graph resource that TABLESCOUT_GRAPH_API_URL points at."""
    parts = urlsplit(settings.graph_api_url)
    return f"{parts.scheme}://{parts.netloc}/.default"


def access_token(settings: Settings) -> str:
    """An application token for Graph from the tenant's authority (client credentials); an authority that is
    unreachable, overloaded or garbled is asked up to TOKEN_ATTEMPTS times, with a growing pause."""
    app_id, password = settings.teams_app_id, settings.teams_app_password
    missing = missing_credentials(settings)
    if missing or app_id is None or password is None:
        raise DirectorySyncError(f"{', '.join(missing)} not set", platform=PLATFORM)
    authority = f"{settings.entra_login_url.rstrip('/')}/{settings.teams_tenant_id}"
    app = EntraApp(app_id, password.get_secret_value(), authority, timeout_s=REQUEST_TIMEOUT_S)
    for attempt in range(TOKEN_ATTEMPTS):
        try:
            return app.token(graph_scope(settings))
        except EntraTokenError as exc:
            if exc.transient and attempt < TOKEN_ATTEMPTS - 1:
                wait = _retry_wait(None, attempt)
                log.info("no Graph token yet (%s); asking again in %.0f s", exc, wait)
                time.sleep(wait)
                continue
            raise DirectorySyncError(_token_failure(exc, authority), platform=PLATFORM) from None
    raise AssertionError("unreachable: the last attempt returns or raises")


def _token_failure(exc: EntraTokenError, authority: str) -> str:
    settings_named = "TABLESCOUT_ENTRA_LOGIN_URL, TABLESCOUT_TEAMS_TENANT_ID"
    if exc.refusal is not None:
        return _token_refusal(exc.refusal, authority)
    if not exc.transient:
        return f"cannot use the Entra ID authority {authority} ({settings_named}): {exc.detail}"
    return (
        f"no Microsoft Graph token after {TOKEN_ATTEMPTS} attempts: Entra ID at {authority} ({settings_named}) "
        f"{exc.detail}"
    )


def _token_refusal(refusal: TokenRefusal, authority: str) -> str:
    codes = refusal.codes
    detail = f"{refusal.error}, AADSTS{codes[0]}" if codes else refusal.error
    if refusal.error in ("invalid_client", "unauthorized_client"):
        if 700016 in codes:  # application not found in the tenant
            return (
                f"Entra ID does not know the app TABLESCOUT_TEAMS_APP_ID in tenant TABLESCOUT_TEAMS_TENANT_ID "
                f"({detail})"
            )
        return f"Entra ID refused TABLESCOUT_TEAMS_APP_PASSWORD for TABLESCOUT_TEAMS_APP_ID ({detail})"
    return f"Entra ID at {authority} gave no Graph token for TABLESCOUT_TEAMS_APP_ID ({detail})"


def _retry_wait(response: httpx2.Response | None, attempt: int) -> float:
    fallback = min(2.0**attempt, MAX_WAIT_S)
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        return fallback
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return fallback
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = (moment - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), MAX_WAIT_S)


class GraphReader:
    """GET requests against Graph with the app token: retries, paging and errors that name what to fix."""

    def __init__(self, settings: Settings, token: str) -> None:
        self.base = settings.graph_api_url.rstrip("/")
        origin = urlsplit(self.base)
        self._origin = (origin.scheme, origin.netloc)
        self._client = httpx2.Client(
            timeout=REQUEST_TIMEOUT_S,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        )

    def close(self) -> None:
        self._client.close()

    def get(self, url: str) -> httpx2.Response:
        parts = urlsplit(url)
        if (parts.scheme, parts.netloc) != self._origin:
            # A page link elsewhere would carry the token to another host.
            raise DirectorySyncError(f"Microsoft Graph sent a page link outside {self.base}", platform=PLATFORM)
        response: httpx2.Response | None = None
        transport_failures = 0
        for attempt in range(MAX_ATTEMPTS):
            try:
                response = self._client.get(url)
            except httpx2.TransportError as exc:
                transport_failures += 1
                if transport_failures == MAX_TRANSPORT_ATTEMPTS or attempt == MAX_ATTEMPTS - 1:
                    raise DirectorySyncError(
                        f"cannot reach Microsoft Graph at {self.base} (TABLESCOUT_GRAPH_API_URL): {exc}",
                        platform=PLATFORM,
                    ) from None
                time.sleep(_retry_wait(None, attempt))
                continue
            if response.status_code not in _RETRY_STATUSES or attempt == MAX_ATTEMPTS - 1:
                return response
            wait = _retry_wait(response, attempt)
            log.info("Microsoft Graph answered %d; retrying in %.1f s", response.status_code, wait)
            time.sleep(wait)
        assert response is not None
        return response

    def pages(self, path: str, params: str, *, missing_ok: bool = False) -> list[dict[str, Any]]:
        """Every item of a collection, following `@odata.nextLink`; [] for a 404 when `missing_ok`."""
        items: list[dict[str, Any]] = []
        url: str | None = f"{self.base}{path}?{params}"
        while url is not None:
            response = self.get(url)
            if response.status_code == 404 and missing_ok:
                return []
            if response.status_code != 200:
                raise DirectorySyncError(self._refusal(path, response), platform=PLATFORM)
            try:
                body = response.json()
            except ValueError:
                raise DirectorySyncError(
                    f"Microsoft Graph answered GET {path} with something other than JSON", platform=PLATFORM
                ) from None
            items.extend(v for v in body.get("value") or [] if isinstance(v, dict))
            link = body.get("@odata.nextLink")
            url = str(link) if link else None
        return items

    def _refusal(self, path: str, response: httpx2.Response) -> str:
        code = ""
        try:
            error = response.json().get("error") or {}
            code = str(error.get("code") or "")
        except (ValueError, AttributeError):
            pass
        said = f" ({code})" if code else ""
        status = response.status_code
        if status == 401:
            return f"Microsoft Graph refused the token of the app TABLESCOUT_TEAMS_APP_ID{said}"
        if status == 403:
            return (
                f"the app TABLESCOUT_TEAMS_APP_ID lacks the Microsoft Graph application permissions "
                f"{GRAPH_PERMISSIONS} (granted with admin consent){said}"
            )
        if status in _RETRY_STATUSES:
            return f"Microsoft Graph kept answering GET {path} with HTTP {status} after {MAX_ATTEMPTS} attempts{said}"
        return f"Microsoft Graph answered GET {path} with HTTP {status}{said}"


def fetch_entra_directory(settings: Settings) -> DirectorySnapshot:
    """Every Entra ID group of the tenant with its transitive user members (nothing is written)."""
    token = access_token(settings)
    tenant = settings.teams_tenant_id
    reader = GraphReader(settings, token)
    try:
        groups: list[GroupEntry] = []
        users: dict[str, UserEntry] = {}
        listed = reader.pages("/groups", f"$select=id,displayName,mailNickname&$top={_PAGE_SIZE}")
        for group in listed:
            group_id = str(group["id"])
            members = reader.pages(
                f"/groups/{quote(group_id, safe='')}/transitiveMembers/microsoft.graph.user",
                f"$select={attributes.graph_select()}&$top={_PAGE_SIZE}",
                missing_ok=True,  # deleted since the group list was read
            )
            for member in members:
                user_id = str(member["id"])
                if user_id not in users:
                    users[user_id] = UserEntry(
                        user_id=user_id,
                        display_name=member.get("displayName") or None,
                        email=member.get("mail") or None,
                        workspace_id=tenant,
                        attributes=attributes.from_graph_user(member),
                    )
            groups.append(
                GroupEntry(
                    group_id=group_id,
                    members=tuple(dict.fromkeys(str(m["id"]) for m in members)),
                    handle=group.get("mailNickname") or None,
                    name=group.get("displayName") or None,
                    workspace_id=tenant,
                )
            )
    finally:
        reader.close()
    log.info("read %d Entra ID groups with %d users", len(groups), len(users))
    return DirectorySnapshot(platform=PLATFORM, groups=tuple(groups), users=users)
