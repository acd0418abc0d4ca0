"""Stopping a command on SIGINT, SIGTERM or SIGHUP, with everything on the way out run.

The command line calls `install()` once: each of these signals then raises `Interrupted` (a KeyboardInterrupt, so
no `except Exception` takes it for an ordinary failure) in the main thread, and every `finally` and context manager
on the way out runs: the open transaction rolls back, the metadata store's handle is closed (the embedded server
stops when no other process holds it), child processes are stopped. Without this, SIGTERM ends Python at once and
leaves the embedded server running with no process to stop it.

A signal that arrives while the store is being started or closed (`deferred()`) waits until that is done, so a
second Ctrl-C cannot leave the server half started or half stopped. Where a C library swallows the exception (an
SQLite progress handler turns anything raised in it into "interrupted", which analysis would take for a statement
timeout and go on), the code calls `raise_if_requested()` at its next step.

Commands that serve (`worker`, `serve`, `model serve-local`) install their own handlers over these.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

#: The signals that stop a command. SIGHUP (the terminal went away) only where it is not ignored (nohup).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A stop signal, raised in the main thread; `exit_code` is the shell's convention (128 + signal number)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@dataclass
class _State:
    requested: int | None = None  # the first stop signal received
    deferring: int = 0  # depth of `deferred()` blocks in the main thread
    held: int | None = None  # a signal received inside them, raised when the outermost ends


_state = _State()


def _on_signal(signum: int, _frame: object) -> None:
    if _state.requested is None:
        _state.requested = signum
    if _state.deferring:
        _state.held = signum
        return
    raise Interrupted(signum)


def install() -> None:
    """Turn the stop signals into `Interrupted` in this process (the main thread; call it from there).

    SIGINT is taken even when the process started with it ignored (a shell starts background jobs so): `kill -INT`
    and Ctrl-C then stop a command the same way wherever it was started."""
    for signum in STOP_SIGNALS:
        if signum == signal.SIGHUP and signal.getsignal(signum) is signal.SIG_IGN:
            continue
        signal.signal(signum, _on_signal)


def requested() -> int | None:
    """The first stop signal this process received, or None."""
    return _state.requested


def raise_if_requested() -> None:
    """Raise `Interrupted` when a stop signal came and its exception may have been swallowed on the way."""
    if _state.requested is not None and not _state.deferring and _in_main_thread():
        raise Interrupted(_state.requested)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold stop signals until the block ends (then raise the last one); other threads' blocks hold nothing."""
    if not _in_main_thread():
        yield
        return
    _state.deferring += 1
    try:
        yield
    finally:
        _state.deferring -= 1
        if _state.deferring == 0 and _state.held is not None:
            signum, _state.held = _state.held, None
            raise Interrupted(signum)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
