"""The process table and handle list of an embedded store, for tests that signal, kill or stop its users: which
postgres runs from a data directory, which PIDs hold it, and waiting for either to change."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from tests.support import REPO


def postmasters(pgdata: Path) -> list[psutil.Process]:
    """The live postgres servers started on `pgdata` (a zombie has ended and does not count)."""
    found = []
    wanted = str(pgdata.resolve())
    for process in psutil.process_iter(["name", "cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if process.info["name"] == "postgres" and wanted in cmdline and process.info["status"] != "zombie":
            found.append(process)
    return found


def postmaster_pid(pgdata: Path) -> int:
    return int((pgdata / "postmaster.pid").read_text().splitlines()[0])


def handle_pids(pgdata: Path) -> list[int]:
    path = pgdata / ".handle_pids.json"
    return list(json.loads(path.read_text())) if path.exists() else []


def dead(pids: list[int]) -> list[int]:
    """Those of `pids` that name no running process (zombies included)."""
    gone = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                gone.append(pid)
        except psutil.NoSuchProcess:
            gone.append(pid)
    return gone


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def assert_nothing_left(pgdata: Path) -> None:
    """No server runs from `pgdata` and its handle list holds no PID (of a dead process or any other)."""
    wait_until(lambda: not postmasters(pgdata), 10, "the embedded server to stop")
    assert handle_pids(pgdata) == []
    assert not (pgdata / "postmaster.pid").exists()


def kill_postmaster(pgdata: Path) -> int:
    """SIGKILL the server running from `pgdata`, as the out-of-memory killer would; returns its PID once it has
    died (a zombie or reaped: a process on its way out still shows its name for a moment)."""
    pid = postmaster_pid(pgdata)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: dead([pid]) == [pid], 10, "the killed server to die")
    return pid


def start_cli(
    home: Path, *args: str, env: dict[str, str] | None = None, ignore_sigint: bool = False
) -> subprocess.Popen[str]:
    """`python -m tablescout ARGS` started in the background, in the installation rooted at `home`; with
    `ignore_sigint`, as a shell starts a background job (SIGINT ignored from the start)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TABLESCOUT_", "ANTHROPIC_", "OPENAI_"))}
    clean.update({"TABLESCOUT_HOME": str(home), "COLUMNS": "200"})
    clean.update(env or {})
    return subprocess.Popen(
        [sys.executable, "-m", "tablescout", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean,
        cwd=REPO,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None,
    )


def has_open(process: subprocess.Popen[str], path: Path) -> bool:
    try:
        return any(f.path == str(path) for f in psutil.Process(process.pid).open_files())
    except psutil.NoSuchProcess:
        return False
