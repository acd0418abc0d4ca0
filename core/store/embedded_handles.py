"""Which processes hold the embedded store open: pgserver's handle list in the data directory, kept honest.

pgserver lists the PIDs of the processes using a data directory in `.handle_pids.json` and stops the server when
the last of them closes its handle. A process that dies without closing it (SIGKILL, a crash, a container that was
stopped) stays listed for ever, and the server then never stops. So each tablescout process also records when it
started beside its PID (`.handle_owners.json`), and before a handle is opened or closed every listed PID is struck
off that no longer runs, is a zombie, or now names another process (its start time differs: PIDs are reused, in a
restarted container from the first ones on). A PID listed without a start time (a process of an older version)
counts while a process of that number runs.

Every function here runs under pgserver's own inter-process lock, held by the caller (core.store.embedded).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import psutil

log = logging.getLogger(__name__)

HANDLE_LIST = ".handle_pids.json"
OWNERS = ".handle_owners.json"
#: Start times of one process read twice agree exactly (clock ticks since boot); anything closer is the same one.
SAME_START_S = 0.001


def started_at(pid: int) -> float | None:
    """When process `pid` started, or None when there is none (a zombie has ended: it only waits to be reaped)."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return float(process.create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def holders(pgdata: Path) -> list[int]:
    """The PIDs pgserver lists as holding the server open (live or not)."""
    raw = _read(pgdata / HANDLE_LIST)
    return [pid for pid in raw if isinstance(pid, int)] if isinstance(raw, list) else []


def is_live(pid: int, recorded: float | None) -> bool:
    started = started_at(pid)
    if started is None:
        return False
    return recorded is None or abs(started - recorded) < SAME_START_S


def prune(pgdata: Path) -> list[int]:
    """Strike dead holders off the handle list (and their start times off the record); returns the PIDs struck."""
    listed = holders(pgdata)
    owners = _owners(pgdata)
    dead = [pid for pid in listed if not is_live(pid, owners.get(pid))]
    if dead:
        log.warning("embedded store: struck off handles of processes that are gone: %s", dead)
    path = pgdata / HANDLE_LIST
    if dead or (path.exists() and _read(path) != listed):  # rewritten whole when it held anything but PIDs
        _write(path, [pid for pid in listed if pid not in dead])
    kept = {pid: started for pid, started in owners.items() if pid in listed and pid not in dead}
    if kept != owners:
        _write(pgdata / OWNERS, {str(pid): started for pid, started in kept.items()})
    return dead


def drop(pgdata: Path, pid: int) -> None:
    """Strike `pid` off by hand: its handle knew a server that is gone, which pgserver would try to stop."""
    listed = holders(pgdata)
    if pid in listed:
        _write(pgdata / HANDLE_LIST, [p for p in listed if p != pid])
    prune(pgdata)  # its start time goes with it


def record_owner(pgdata: Path) -> None:
    """Note this process's start time beside its PID (after pgserver listed it)."""
    started = started_at(os.getpid())
    if started is None:
        return
    owners = _owners(pgdata) | {os.getpid(): started}
    _write(pgdata / OWNERS, {str(pid): value for pid, value in owners.items()})


def _owners(pgdata: Path) -> dict[int, float]:
    raw = _read(pgdata / OWNERS)
    if not isinstance(raw, dict):
        return {}
    return {int(pid): float(started) for pid, started in raw.items()}


def _read(path: Path) -> object:
    """The file's JSON; None when it is missing or cannot be read (cut short by a crash: it is started over)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("embedded store: %s cannot be read (%s); starting it over", path.name, exc)
        return None


def _write(path: Path, value: object) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(value))
    os.replace(temporary, path)
