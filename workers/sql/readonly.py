"""Running one statement read-only, under a timeout, fetching a bounded result (SPEC §7, layers 3 and 4).

This layer holds on its own, whatever text it is given:
- PostgreSQL: `SET TRANSACTION READ ONLY` and `SET LOCAL statement_timeout`; the statement goes through the extended
  protocol (one statement per call) in single-row streaming mode, and leaving early cancels it.
- MariaDB/MySQL: `START TRANSACTION READ ONLY` with `max_statement_time` (MySQL: `max_execution_time`); no
  multi-statement support; an unbuffered cursor streams rows, and a connection left with unread rows is discarded
  rather than drained.
- SQLite: a `mode=ro` file with `query_only`; the driver runs one statement per call; a progress handler interrupts
  the statement at the deadline.
At most `max_rows + 1` rows and about `max_bytes` of values are read; the transaction is always rolled back. A
client-side watchdog cancels a statement the engine failed to stop shortly after the deadline.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import PoolProxiedConnection

from catalog.connectors.errors import driver_message
from workers.sql.engines import FAMILY, family_of
from workers.sql.limits import MAX_CELL_CHARS, SqlLimits

#: The watchdog cancels this long after the deadline, should the engine's own timeout not have fired.
WATCHDOG_GRACE_S = 2.0
SQLITE_PROGRESS_STEPS = 10_000
PG_QUERY_CANCELED = "57014"
#: ER_STATEMENT_TIMEOUT (MariaDB), ER_QUERY_TIMEOUT (MySQL), ER_QUERY_INTERRUPTED (KILL QUERY by the watchdog).
MYSQL_TIMEOUT_CODES = frozenset({1969, 3024, 1317})
CUT_MARK = "…"


class ExecutionError(Exception):
    """The database refused or failed the statement; `str(exc)` is the engine's first line of explanation.
    `reusable` says whether the connection was left in a known state (rolled back) and may go back to the pool."""

    def __init__(self, message: str, *, reusable: bool = False) -> None:
        super().__init__(message)
        self.reusable = reusable


class ExecutionTimeout(ExecutionError):
    """The statement ran past the timeout and was cancelled."""


@dataclass
class Fetched:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool


def execute_read_only(engine: Engine, sql: str, limits: SqlLimits) -> Fetched:
    """Run `sql` as one statement in a read-only transaction on `engine` (an engine from `workers.sql.engines`).

    Raises ExecutionTimeout past `limits.timeout_s` and ExecutionError for anything else the database reports; the
    connection goes back to the pool rolled back, or is discarded when its state is uncertain.
    """
    family = family_of(engine)
    run = _RUNNERS.get(family)
    if run is None:
        raise ExecutionError(f"running SQL on {engine.dialect.name} sources is not supported")
    try:
        raw = engine.raw_connection()
    except SQLAlchemyError as exc:
        raise ExecutionError(f"cannot connect to the database: {driver_message(exc, _password(engine))}") from exc
    keep = False
    try:
        fetched, keep = run(engine, raw, sql, limits)
        return fetched
    except ExecutionError as exc:
        keep = exc.reusable
        raise
    finally:
        if keep:
            raw.close()
        else:
            raw.invalidate()


# --- fetching --------------------------------------------------------------------------------------------------


class _Budget:
    def __init__(self, limits: SqlLimits) -> None:
        self.limits = limits
        self.rows: list[tuple[Any, ...]] = []
        self.used = 0
        self.truncated = False

    def take(self, row: tuple[Any, ...] | list[Any]) -> bool:
        """Add a row; False once the result is known to be truncated (a row beyond max_rows or the byte budget)."""
        if len(self.rows) >= self.limits.max_rows:
            self.truncated = True
            return False
        cells = tuple(_cut(value) for value in row)
        size = sum(_size(value) for value in cells)
        if self.rows and self.used + size > self.limits.max_bytes:
            self.truncated = True
            return False
        self.rows.append(cells)
        self.used += size
        return True


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


def _drain(rows: Iterator[Any], budget: _Budget) -> bool:
    """Feed rows into the budget; True when the rows ran out (the statement finished) rather than the budget."""
    return all(budget.take(row) for row in rows)


class _Watchdog:
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

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def _timeout_message(limits: SqlLimits) -> str:
    return f"the query ran longer than {limits.timeout_s:g} s and was cancelled"


def _password(engine: Engine) -> str | None:
    password = engine.url.password
    return str(password) if password else None


# --- PostgreSQL ----------------------------------------------------------------------------------------------------


def _run_postgres(engine: Engine, raw: PoolProxiedConnection, sql: str, limits: SqlLimits) -> tuple[Fetched, bool]:
    import psycopg

    conn = raw.driver_connection
    assert isinstance(conn, psycopg.Connection)
    budget = _Budget(limits)
    columns: list[str] = []
    milliseconds = max(1, round(limits.timeout_s * 1000))
    watchdog = _Watchdog(limits.timeout_s, conn.cancel_safe)
    try:
        conn.rollback()
        with conn.cursor() as setup:
            setup.execute("SET TRANSACTION READ ONLY")
            setup.execute(f"SET LOCAL statement_timeout = {milliseconds}")
            setup.execute("SET LOCAL standard_conforming_strings = on")  # strings read as the guard parsed them
        cursor = conn.cursor()
        with watchdog:
            stream = cast(Generator[Any, None, None], cursor.stream(sql))
            try:
                for row in stream:
                    if not columns and cursor.description:
                        columns = [d.name for d in cursor.description]
                    if not budget.take(row):
                        break
            finally:
                stream.close()  # cancels the statement if rows are left, and consumes what was already sent
        if not columns and cursor.description:
            columns = [d.name for d in cursor.description]
        cursor.close()
        conn.rollback()
    except psycopg.Error as exc:
        usable = _rollback_quietly(conn.rollback)
        if getattr(exc, "sqlstate", None) == PG_QUERY_CANCELED or watchdog.fired:
            raise ExecutionTimeout(_timeout_message(limits), reusable=usable) from exc
        raise ExecutionError(_first_line(exc, engine), reusable=usable) from exc
    return Fetched(columns, budget.rows, budget.truncated), True


# --- MariaDB / MySQL -----------------------------------------------------------------------------------------------


def _run_mysql(engine: Engine, raw: PoolProxiedConnection, sql: str, limits: SqlLimits) -> tuple[Fetched, bool]:
    import pymysql  # type: ignore[import-untyped]
    from pymysql.cursors import SSCursor  # type: ignore[import-untyped]

    conn = raw.driver_connection
    assert isinstance(conn, pymysql.connections.Connection)
    mariadb = raw.info.get(FAMILY) != "mysql"
    budget = _Budget(limits)
    finished = False
    thread_id = conn.thread_id()

    def kill() -> None:
        with engine.connect() as other:
            other.exec_driver_sql(f"KILL QUERY {int(thread_id)}")

    watchdog = _Watchdog(limits.timeout_s, kill)
    try:
        conn.rollback()
        with conn.cursor() as setup:
            if mariadb:
                setup.execute(f"SET SESSION max_statement_time = {limits.timeout_s:.3f}")
            else:
                setup.execute(f"SET SESSION max_execution_time = {max(1, round(limits.timeout_s * 1000))}")
            setup.execute("START TRANSACTION READ ONLY")
        cursor = SSCursor(conn)
        try:
            with watchdog:
                cursor.execute(sql)
                columns = [str(d[0]) for d in cursor.description or ()]
                finished = _drain(iter(cursor.fetchone, None), budget)
        finally:
            if finished:
                cursor.close()
            else:
                # Unread rows would have to be read off the wire before the connection could be used again.
                _abandon_unbuffered(cursor)
        if finished:
            conn.rollback()
    except pymysql.Error as exc:
        code = exc.args[0] if exc.args else None
        # An error packet ends the result, so the connection is usable where it can still roll back.
        usable = conn.open and _rollback_quietly(conn.rollback)
        if code in MYSQL_TIMEOUT_CODES or watchdog.fired:
            raise ExecutionTimeout(_timeout_message(limits), reusable=usable) from exc
        raise ExecutionError(_first_line(exc, engine), reusable=usable) from exc
    return Fetched(columns, budget.rows, budget.truncated), finished


def _abandon_unbuffered(cursor: Any) -> None:
    """Let go of an unbuffered result with rows left unread, without reading them (PyMySQL would drain every row
    when the cursor or result is collected); the caller then discards the connection, which ends the statement."""
    result = cursor._result
    if result is not None:
        result.unbuffered_active = False
    cursor.connection = None


# --- SQLite --------------------------------------------------------------------------------------------------------


def _run_sqlite(engine: Engine, raw: PoolProxiedConnection, sql: str, limits: SqlLimits) -> tuple[Fetched, bool]:
    conn = raw.driver_connection
    assert isinstance(conn, sqlite3.Connection)
    budget = _Budget(limits)
    deadline = time.monotonic() + limits.timeout_s
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, SQLITE_PROGRESS_STEPS)
    try:
        conn.rollback()
        cursor = conn.cursor()
        try:
            cursor.execute(sql)
            columns = [str(d[0]) for d in cursor.description or ()]
            _drain(iter(cursor.fetchone, None), budget)
        finally:
            cursor.close()
        conn.rollback()
    except sqlite3.Error as exc:
        usable = _rollback_quietly(conn.rollback)
        if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
            raise ExecutionTimeout(_timeout_message(limits), reusable=usable) from exc
        raise ExecutionError(_first_line(exc, engine), reusable=usable) from exc
    finally:
        conn.set_progress_handler(None, 0)
    return Fetched(columns, budget.rows, budget.truncated), True


def _rollback_quietly(rollback: Callable[[], None]) -> bool:
    try:
        rollback()
    except Exception:
        return False
    return True


def _first_line(exc: BaseException, engine: Engine) -> str:
    return driver_message(exc, _password(engine))


_RUNNERS: dict[str, Callable[[Engine, PoolProxiedConnection, str, SqlLimits], tuple[Fetched, bool]]] = {
    "postgresql": _run_postgres,
    "mysql": _run_mysql,
    "sqlite": _run_sqlite,
}
