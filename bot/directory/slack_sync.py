"""Slack user groups through the Web API (`usergroups.list`, `usergroups.users.list`) and their members' profile
attributes (`team.profile.get` for the labels of the workspace's custom fields, `users.profile.get` per member),
read with `bot.slack.reads.read_api`.

The bot token needs the `usergroups:read` scope, and `users.profile:read` for attributes (`users:read.email` adds the
email address). Without `users.profile:read` the groups are still synced, every user of the workspace is left without
attributes (so row filters that need one match nothing) and the report says why. Disabled groups are not listed, so
their members lose the roles the group gave. Rate limits (HTTP 429) are waited out as Slack's Retry-After says, by the
SDK's own retry handler; none of these methods is paginated. Errors name the setting or the scope to fix and never quote
the token.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.directory import attributes
from bot.directory.errors import DirectorySyncError
from bot.directory.snapshot import DirectorySnapshot, GroupEntry, UserEntry
from bot.slack.reads import SlackReadError, read_api
from core.config.settings import Settings

log = logging.getLogger(__name__)

PLATFORM = "slack"
PROFILE_SCOPE = "users.profile:read"
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


def _field_labels(settings: Settings) -> dict[str, str] | None:
    """Custom profile field id → label (team.profile.get); None when the token lacks users.profile:read."""
    try:
        answer = read_api(_token(settings), slack_api_url(settings), "team.profile.get")
    except SlackReadError as exc:
        if exc.error == "missing_scope":
            return None
        raise DirectorySyncError(_describe("team.profile.get", exc), platform=PLATFORM) from None
    fields = (answer.get("profile") or {}).get("fields") or []
    return {str(f["id"]): str(f["label"]) for f in fields if isinstance(f, dict) and f.get("id") and f.get("label")}


def _member(settings: Settings, user_id: str, labels: dict[str, str], workspace: str | None) -> UserEntry:
    try:
        answer = read_api(_token(settings), slack_api_url(settings), "users.profile.get", user=user_id)
    except SlackReadError as exc:
        if exc.error == "user_not_found":  # removed from the workspace since the group was read
            return UserEntry(user_id, workspace_id=workspace)
        raise DirectorySyncError(_describe("users.profile.get", exc), platform=PLATFORM) from None
    profile = answer.get("profile") or {}
    name = profile.get("real_name") or profile.get("display_name") or None
    return UserEntry(
        user_id,
        display_name=str(name) if name else None,
        email=str(profile["email"]) if profile.get("email") else None,
        workspace_id=workspace,
        attributes=attributes.from_slack_profile(profile, labels),
    )


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
    members = {u: g.workspace_id for g in groups for u in g.members}
    users: dict[str, UserEntry] = {}
    skipped: str | None = None
    labels = _field_labels(settings) if members else {}
    if labels is None:
        skipped = f"the Slack app lacks the scope {PROFILE_SCOPE}; add it and reinstall the app"
        log.warning("Slack user attributes not read: %s", skipped)
    else:
        users = {u: _member(settings, u, labels, workspace) for u, workspace in members.items()}
    log.info("read %d Slack user groups with %d members", len(groups), len(members))
    return DirectorySnapshot(platform=PLATFORM, groups=tuple(groups), users=users, attributes_skipped=skipped)
