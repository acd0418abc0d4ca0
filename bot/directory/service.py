"""Syncing the identity directory of every configured platform: the service behind `tablescout directory sync` and
the scheduled task.

Each platform is read from its API first and then written in one transaction of its own, so a platform whose read
fails leaves what the store held for it untouched, and the other platforms are still synced. A platform without
credentials is skipped with the reason, which is not an error: an installation may use Slack, Teams or neither.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from bot.directory import graph_sync, slack_sync
from bot.directory.errors import DirectorySyncError
from bot.directory.snapshot import DirectorySnapshot, SyncReport, apply_snapshot
from core.config.settings import Settings
from core.errors import ConfigError
from core.store.database import Store

log = logging.getLogger(__name__)

PLATFORMS = ("slack", "teams")
_READERS: dict[str, Callable[[Settings], DirectorySnapshot]] = {
    "slack": slack_sync.fetch_slack_directory,
    "teams": graph_sync.fetch_entra_directory,
}
_NAMES = {"slack": "Slack", "teams": "Teams (Entra ID)"}


def missing_credentials(settings: Settings, platform: str) -> list[str]:
    """The settings a platform's sync needs that are not set (names only)."""
    if platform == "slack":
        return [] if settings.slack_bot_token is not None else ["SLACK_BOT_TOKEN"]
    if platform == "teams":
        return graph_sync.missing_credentials(settings)
    raise ConfigError(f"unknown platform {platform!r}; expected one of {', '.join(PLATFORMS)}")


def sync_directory(
    settings: Settings, store: Store, platforms: Iterable[str] = PLATFORMS, *, now: datetime | None = None
) -> list[SyncReport]:
    """Sync each platform in `platforms` that has credentials; one report per platform, in order.

    Raises DirectorySyncError when a platform could not be read (after trying the others); its `reports` holds what
    the other platforms did. Raises ConfigError for a platform name tablescout does not know.
    """
    wanted = list(dict.fromkeys(platforms))
    for platform in wanted:
        missing_credentials(settings, platform)  # rejects unknown names before anything is read
    reports: list[SyncReport] = []
    failures: list[tuple[str, DirectorySyncError]] = []
    for platform in wanted:
        missing = missing_credentials(settings, platform)
        if missing:
            reason = f"{', '.join(missing)} not set"
            log.info("%s directory not synced: %s", _NAMES[platform], reason)
            reports.append(SyncReport(platform=platform, skipped=reason))
            continue
        try:
            snapshot = _READERS[platform](settings)
        except DirectorySyncError as exc:
            log.warning("%s directory sync failed: %s", _NAMES[platform], exc)
            failures.append((platform, exc))
            continue
        with store.transaction() as session:
            report = apply_snapshot(session, snapshot, now=now or datetime.now(UTC))
        log.info(
            "%s directory synced: %d groups, %d users, %d memberships (%d groups and %d users removed)",
            _NAMES[platform],
            report.groups,
            report.users,
            report.memberships,
            report.removed_groups,
            report.removed_users,
        )
        reports.append(report)
    if failures:
        message = "; ".join(f"{_NAMES[platform]} directory sync failed: {exc}" for platform, exc in failures)
        raise DirectorySyncError(message, platform=failures[0][0], reports=reports)
    return reports
