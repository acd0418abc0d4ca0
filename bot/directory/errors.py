"""The error a directory sync raises: which platform failed and why, naming settings but never their values."""

from __future__ import annotations

from collections.abc import Sequence

from bot.directory.snapshot import SyncReport
from core.errors import TablescoutError


class DirectorySyncError(TablescoutError):
    """A platform's directory could not be read (refused credentials, missing permission, unreachable API).

    Nothing of that platform was written: a sync applies a platform's directory in one transaction or not at all.
    `reports` holds what the other platforms of the same run did (synced or skipped), so a caller can still show it.
    """

    def __init__(self, message: str, *, platform: str | None = None, reports: Sequence[SyncReport] = ()) -> None:
        super().__init__(message)
        self.platform = platform
        self.reports = list(reports)
