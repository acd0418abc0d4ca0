"""Slack user groups through the Web API (`usergroups.list`, `usergroups.users.list`); the one module that imports
slack_sdk for the directory.

The bot token needs the `usergroups:read` scope. Disabled groups are not listed, so their members lose the roles the
group gave. Rate limits (HTTP 429) are waited out as Slack's Retry-After says, by the SDK's own retry handler;
neither method is paginated. Errors name the setting or the scope to fix and never quote the token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.web import SlackResponse
from sqlalchemy.orm import Session

from bot.directory.errors import DirectorySyncError
from bot.directory.snapshot import DirectorySnapshot, GroupEntry, SyncReport, apply_snapshot
from core.settings import Settings

log = logging.getLogger(__name__)

PLATFORM = "slack"
SLACK_API_URL = "https://slack.com/api/"
REQUEST_TIMEOUT_S = 30
#: Consecutive 429 answers waited out for one call before the sync gives up.
RATE_LIMIT_RETRIES = 5
#: Slack's answers when the token itself is wrong, expired or of the wrong kind.
_TOKEN_ERRORS = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "not_allowed_token_type"}
)


def slack_api_url(settings: Settings) -> str:
    base = settings.slack_api_url or SLACK_API_URL
    return base if base.endswith("/") else base + "/"


def web_client(settings: Settings) -> WebClient:
    """A Web API client for the bot token, retrying connection errors, 5xx answers and rate limits."""
    if settings.slack_bot_token is None:
        raise DirectorySyncError("SLACK_BOT_TOKEN is not set", platform=PLATFORM)
    return WebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=slack_api_url(settings),
        timeout=REQUEST_TIMEOUT_S,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            ServerErrorRetryHandler(max_retry_count=2),
            RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ],
    )


def _describe(method: str, response: SlackResponse) -> str:
    data: Any = response.data if isinstance(response.data, dict) else {}
    error = str(data.get("error") or f"HTTP {response.status_code}")
    if error in _TOKEN_ERRORS:
        return f"Slack refused SLACK_BOT_TOKEN ({error}) on {method}; set the Slack app's bot token (xoxb-...)"
    if error == "missing_scope":
        needed = data.get("needed") or "usergroups:read"
        return f"the Slack app lacks the scope {needed} (needed by {method}); add it and reinstall the app"
    if response.status_code == 429 or error == "ratelimited":
        return f"Slack kept rate-limiting {method} after {RATE_LIMIT_RETRIES} retries; try again later"
    return f"Slack answered {method} with an error: {error}"


def _call(client: WebClient, method: str, call: Callable[..., SlackResponse], **arguments: Any) -> dict[str, Any]:
    try:
        response = call(**arguments)
    except SlackApiError as exc:
        raise DirectorySyncError(_describe(method, exc.response), platform=PLATFORM) from None
    except (SlackClientError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise DirectorySyncError(
            f"cannot reach the Slack Web API at {client.base_url} ({method}): {reason}", platform=PLATFORM
        ) from None
    except ValueError:
        raise DirectorySyncError(
            f"the Slack Web API at {client.base_url} answered {method} with something other than JSON",
            platform=PLATFORM,
        ) from None
    data = response.data
    if not isinstance(data, dict):
        raise DirectorySyncError(f"the Slack Web API answered {method} with an unexpected body", platform=PLATFORM)
    return data


def fetch_slack_directory(settings: Settings) -> DirectorySnapshot:
    """Every enabled user group of the workspace with its members, read from the Web API (nothing is written)."""
    client = web_client(settings)
    listing = _call(client, "usergroups.list", client.usergroups_list, include_disabled=False, include_users=False)
    groups: list[GroupEntry] = []
    for group in listing.get("usergroups") or []:
        if group.get("date_delete"):  # disabled, should the API list it anyway
            continue
        group_id = str(group["id"])
        members = _call(
            client, "usergroups.users.list", client.usergroups_users_list, usergroup=group_id, include_disabled=False
        )
        groups.append(
            GroupEntry(
                group_id=group_id,
                members=tuple(str(u) for u in members.get("users") or []),
                handle=group.get("handle") or None,
                name=group.get("name") or None,
                workspace_id=group.get("team_id") or None,
            )
        )
    log.info("read %d Slack user groups", len(groups))
    return DirectorySnapshot(platform=PLATFORM, groups=tuple(groups))


def sync_slack(session: Session, settings: Settings, *, now: datetime) -> SyncReport:
    """Read the Slack directory and write it through `session` (the caller commits)."""
    return apply_snapshot(session, fetch_slack_directory(settings), now=now)
