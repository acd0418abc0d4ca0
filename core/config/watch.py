"""The configuration file as a long-running process sees it: re-read when it changes, never half-applied.

Workers and bot servers run for weeks; an operator who revokes a table in the file expects the next turn to obey.
`Settings.file` therefore asks the watch of its file, which compares the file's signature (modification time,
change time, size, inode) with the one it last read and re-reads the file when it differs, or while the file is so
recently modified that a second edit could still share its timestamps. A new version is used only once it
validates as a whole. An invalid edit keeps the last valid configuration in use, is logged once with the reason,
and is reported by `ConfigState.problem` (the health checks show it) until the file is valid again.

A process that never saw a valid version has nothing to fall back on: reading raises `ConfigError`, as at start-up.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.config.file import ConfigFile, parse_document, read_text, validate_document
from core.errors import ConfigError

log = logging.getLogger(__name__)

#: A file modified less than this long ago is read again on every look: an edit within the same timestamp tick
#: (or on a file system with coarse timestamps) would otherwise go unnoticed.
RECENT_S = 2.0

_Signature = tuple[int, int, int, int] | None


@dataclass(frozen=True)
class ConfigState:
    """The configuration in use and, when the file on disk is not it, why."""

    path: Path
    config: ConfigFile  # the last valid version of the file
    digest: str  # sha256 of that version's text
    loaded_at: datetime  # when that version was read
    problem: str | None = None  # why the file as it is on disk now is not in use
    problem_since: datetime | None = None

    def health(self) -> dict[str, Any]:
        """The state as health checks report it (JSON-ready; names the file, never its contents)."""
        report: dict[str, Any] = {
            "state": "ok" if self.problem is None else "invalid",
            "path": str(self.path),
            "loaded_at": self.loaded_at.isoformat(timespec="seconds"),
            "digest": self.digest[:12],
        }
        if self.problem is not None:
            report["error"] = self.problem
            report["invalid_since"] = self.problem_since.isoformat(timespec="seconds") if self.problem_since else None
        return report


def _signature(path: Path) -> _Signature:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return (-1, -1, -1, -1)  # unreadable: read (and fail) again, keeping the last valid version
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)


def _recent(signature: _Signature) -> bool:
    if signature is None:
        return False
    newest_ns = max(signature[0], signature[1])
    return time.time_ns() - newest_ns < RECENT_S * 1e9


class ConfigWatch:
    """One configuration file, re-read when it changes; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._state: ConfigState | None = None
        self._signature: _Signature = None
        self._seen: str | None = None  # digest of the text last read, valid or not

    def current(self, *, strict: bool = False) -> ConfigState:
        """The configuration in use, after looking at the file. `strict`: raise ConfigError when the file on disk
        is invalid, even though a last valid version is still in use (a command starting should refuse)."""
        with self._lock:
            signature = _signature(self.path)
            state = self._state
            if state is not None and signature == self._signature and not _recent(signature):
                return self._checked(state, strict)
            try:
                text = read_text(self.path)
            except ConfigError as exc:
                self._seen = None
                return self._invalid(signature, str(exc), strict, exc)
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if state is not None and digest == self._seen:
                self._signature = signature
                return self._checked(state, strict)
            self._seen = digest
            try:
                config = validate_document(self.path, parse_document(self.path, text))
            except ConfigError as exc:
                return self._invalid(signature, str(exc), strict, exc)
            if state is not None and (digest != state.digest or state.problem is not None):
                log.warning("%s changed: the new configuration is in use from now on", self.path)
            if state is None or digest != state.digest:
                state = ConfigState(self.path, config, digest, datetime.now(UTC))
            else:
                state = replace(state, problem=None, problem_since=None)
            self._state, self._signature = state, signature
            return state

    def _checked(self, state: ConfigState, strict: bool) -> ConfigState:
        if strict and state.problem is not None:
            raise ConfigError(state.problem)
        return state

    def _invalid(self, signature: _Signature, problem: str, strict: bool, exc: ConfigError) -> ConfigState:
        state = self._state
        if state is None:
            raise exc  # nothing valid to fall back on; the next look reads the file again
        self._signature = signature
        if state.problem != problem:
            log.error(
                "%s was edited but is not valid, so the configuration loaded at %s stays in use until it is fixed: %s",
                self.path,
                state.loaded_at.isoformat(timespec="seconds"),
                problem,
            )
            state = replace(state, problem=problem, problem_since=datetime.now(UTC))
            self._state = state
        if strict:
            raise exc
        return state


_watches: dict[Path, ConfigWatch] = {}
_registry_lock = threading.Lock()


def watch(path: Path) -> ConfigWatch:
    """The process's one watch of the file at `path`, so every settings object of the process agrees."""
    key = path.expanduser().absolute()
    with _registry_lock:
        found = _watches.get(key)
        if found is None:
            found = _watches[key] = ConfigWatch(key)
        return found
