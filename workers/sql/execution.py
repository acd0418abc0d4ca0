"""What every engine's runner shares (SPEC §7, layer 4): the errors, the fetched result and its byte budget, the
statement's settings, the watchdog, and turning a driver error into a message."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from catalog.connectors.errors import driver_message
from core.access.mask_key import MaskKey
from workers.sql.limits import MAX_CELL_CHARS, SqlLimits
from workers.sql.secret_text import scrubbed

#: The watchdog cancels this long after the deadline, should the engine's own timeout not have fired.
WATCHDOG_GRACE_S = 2.0
CUT_MARK = "…"


class ExecutionError(Exception):
    """The database refused or failed the statement; `str(exc)` is the engine's first line of explanation.
    `reusable` says whether the connection was left in a known state (rolled back) and may go back to the pool."""

    def __init__(self, message: str, *, reusable: bool = False) -> None:
        super().__init__(message)
        self.reusable = reusable


class ExecutionTimeout(ExecutionError):
    """The statement ran past the timeout and was cancelled."""


class ExecutionRefused(ExecutionError):
    """The executor would not run the statement (not a plain read, or an account it cannot make safe)."""


@dataclass
class Fetched:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool
    cut_values: int = 0  # values cut to MAX_CELL_CHARS (characters, or bytes for binary values)


@dataclass(frozen=True)
class RunSpec:
    limits: SqlLimits
    catalog: bool
    params: dict[str, Any] | None = None
    mask_key: MaskKey | None = None

    def failure(self, exc: BaseException, engine: Engine, *, usable: bool) -> ExecutionError:
        """The driver's error as an ExecutionError, scrubbed of the mask key; raise it `from self.cause(exc)`."""
        return ExecutionError(scrubbed(first_line(exc, engine), self.mask_key), reusable=usable)

    def cause(self, exc: BaseException) -> BaseException | None:
        """What an ExecutionError is raised from: the driver's error, or nothing where a mask key was bound (the
        driver's text may quote the statement, key included), so that no traceback can show it either."""
        return None if self.mask_key is not None else exc


# --- fetching --------------------------------------------------------------------------------------------------


class Budget:
    def __init__(self, limits: SqlLimits) -> None:
        self.limits = limits
        self.rows: list[tuple[Any, ...]] = []
        self.used = 0
        self.truncated = False
        self.cut_values = 0

    def take(self, row: tuple[Any, ...] | list[Any]) -> bool:
        """Add a row; False once the result is known to be truncated (a row beyond max_rows or the byte budget)."""
        if len(self.rows) >= self.limits.max_rows:
            self.truncated = True
            return False
        cells = tuple(_cut(value) for value in row)
        self.cut_values += sum(1 for a, b in zip(row, cells, strict=True) if a is not b)
        size = sum(_size(value) for value in cells)
        if self.rows and self.used + size > self.limits.max_bytes:
            self.truncated = True
            return False
        self.rows.append(cells)
        self.used += size
        return True

    def fetched(self, columns: list[str]) -> Fetched:
        return Fetched(columns, self.rows, self.truncated, self.cut_values)


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[:MAX_CELL_CHARS] + CUT_MARK
    if isinstance(value, (bytes, bytearray, memoryview)) and len(value) > MAX_CELL_CHARS:
        return bytes(value[:MAX_CELL_CHARS])
    return value


def _size(value: Any) -> int:
    if value is None:
        return 4
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    return len(str(value))


def drain(rows: Iterator[Any], budget: Budget) -> bool:
    """Feed rows into the budget; True when the rows ran out (the statement finished) rather than the budget."""
    return all(budget.take(row) for row in rows)


class Watchdog:
    """Calls `cancel` once the deadline plus a grace period has passed, unless stopped first."""

    def __init__(self, seconds: float, cancel: Callable[[], None]) -> None:
        self.fired = False
        self._cancel = cancel
        self._timer = threading.Timer(seconds + WATCHDOG_GRACE_S, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        with contextlib.suppress(Exception):
            self._cancel()

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def timeout_message(limits: SqlLimits) -> str:
    return f"the query ran longer than {limits.timeout_s:g} s and was cancelled"


def password_of(engine: Engine) -> str | None:
    password = engine.url.password
    return str(password) if password else None


def rollback_quietly(rollback: Callable[[], None]) -> bool:
    try:
        rollback()
    except Exception:
        return False
    return True


def first_line(exc: BaseException, engine: Engine) -> str:
    return driver_message(exc, password_of(engine))
