"""Slack user groups through the Web API (`usergroups.list`, `usergroups.users.list`), read with
`bot.slack.web.read_api`.

The bot token needs the `usergroups:read` scope. Disabled groups are not listed, so their members lose the roles the
group gave. Rate limits (HTTP 429) are waited out as Slack's Retry-After says, by the SDK's own retry handler;
neither method is paginated. Errors name the setting or the scope to fix and never quote the token.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from bot.directory.errors import DirectorySyncError
from bot.directory.snapshot import DirectorySnapshot, GroupEntry, SyncReport, apply_snapshot
from bot.slack.web import SlackReadError, read_api
from core.settings import Settings

log = logging.getLogger(__name__)

PLATFORM = "slack"
SLACK_API_URL = "https://slack.com/api/"
#: Consecutive 429 answers waited out for one call before the sync gives up.
RATE_LIMIT_RETRIES = 5
#: Slack's answers when the token itself is wrong, expired or of the wrong kind.
_TOKEN_ERRORS = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "not_allowed_token_type"}
)


def slack_api_url(settings: Settings) -> str:
    base = settings.slack_api_url or SLACK_API_URL
    return base if base.endswith("/") else base + "/"


def _token(settings: Settings) -> str:
    if settings.slack_bot_token is None:
        raise DirectorySyncError("SLACK_BOT_TOKEN is not set", platform=PLATFORM)
    return settings.slack_bot_token.get_secret_value()


def _describe(method: str, failure: SlackReadError) -> str:
    error = failure.error or ""
    if failure.unreachable or not error:
        return f"{failure} ({method})"
    if error in _TOKEN_ERRORS:
        return f"Slack refused SLACK_BOT_TOKEN ({error}) on {method}; set the Slack app's bot token (xoxb-...)"
    if error == "missing_scope":
        needed = failure.data.get("needed") or "usergroups:read"
        return f"the Slack app lacks the scope {needed} (needed by {method}); add it and reinstall the app"
    if failure.status == 429 or error == "ratelimited":
        return f"Slack kept rate-limiting {method} after {RATE_LIMIT_RETRIES} retries; try again later"
    return f"Slack answered {method} with an error: {error}"


def _call(settings: Settings, method: str, **arguments: Any) -> dict[str, Any]:
    try:
        return read_api(_token(settings), slack_api_url(settings), method, **arguments)
    except SlackReadError as exc:
        raise DirectorySyncError(_describe(method, exc), platform=PLATFORM) from None


def fetch_slack_directory(settings: Settings) -> DirectorySnapshot:
    """Every enabled user group of the workspace with its members, read from the Web API (nothing is written)."""
    listing = _call(settings, "usergroups.list", include_disabled=False, include_users=False)
    groups: list[GroupEntry] = []
    for group in listing.get("usergroups") or []:
        if group.get("date_delete"):  # disabled, should the API list it anyway
            continue
        group_id = str(group["id"])
        members = _call(settings, "usergroups.users.list", usergroup=group_id, include_disabled=False)
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
