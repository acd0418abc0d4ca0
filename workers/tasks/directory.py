"""The scheduled identity-directory sync (hourly on the beat schedule) and on-demand syncs: the same service as
`tablescout directory sync`."""

from __future__ import annotations

import logging

from bot.directory.errors import DirectorySyncError
from bot.directory.service import PLATFORMS, sync_directory
from core.config.settings import load_settings
from core.store import migrate
from core.store.database import open_store
from workers.app import DIRECTORY_SYNC_TASK, task

log = logging.getLogger(__name__)


def run_directory_sync(platforms: list[str] | None = None) -> dict[str, str]:
    """Sync the named platforms (every one when None); returns platform → "ok", "skipped: <reason>" or
    "failed: <reason>". A failure is logged, not raised: the next scheduled run tries again."""
    wanted = list(platforms or PLATFORMS)
    settings = load_settings()
    store = open_store(settings)
    try:
        migrate.require_current(store.engine)
        failure: str | None = None
        try:
            reports = sync_directory(settings, store, wanted)
        except DirectorySyncError as exc:
            log.error("directory sync failed: %s", exc)
            reports, failure = exc.reports, str(exc)
        outcome = {r.platform: "ok" if r.skipped is None else f"skipped: {r.skipped}" for r in reports}
        for platform in wanted:
            outcome.setdefault(platform, f"failed: {failure}")
        return outcome
    finally:
        store.close()


@task(DIRECTORY_SYNC_TASK)
def sync_directory_task(platforms: list[str] | None = None) -> None:
    for platform, result in run_directory_sync(platforms).items():
        log.info("directory %s: %s", platform, result)
