"""Running one statement read-only, under a timeout, fetching a bounded result (SPEC §7, layers 3 and 4).

This layer holds on its own, whatever text it is given:
- Every engine: the text must read as one plain query (`workers.sql.plain_read`), so SET, PRAGMA, COPY, DDL, DML,
  SELECT ... INTO and executable comments never reach the driver; long values are cut on the database side
  (`workers.sql.capping`) before a row reaches the worker.
- PostgreSQL: `SET TRANSACTION READ ONLY`, `SET LOCAL statement_timeout`, `work_mem` and, where the account may set
  it, `temp_file_limit`; a superuser account drops to the `pg_read_all_data` role for the statement (no dblink to
  itself, no server files, no programs). The statement goes through the extended protocol (one statement per call)
  in single-row streaming mode, and leaving early cancels it.
- MariaDB/MySQL: `START TRANSACTION READ ONLY` with `max_statement_time` (MySQL: `max_execution_time`) and capped
  in-memory temporary tables; no multi-statement support; an unbuffered cursor streams rows.
- SQLite: a `mode=ro` file with `query_only` and a length limit; an authorizer (`workers.sql.sqlite_authorizer`)
  allows reads only; the driver runs one statement per call; a progress handler interrupts it at the deadline.
A server session that ran the model's statement is never used again (a fresh session per statement), so session
settings, variables, temporary tables and advisory locks (`GET_LOCK`, `pg_advisory_lock`) end with the call.
At most `max_rows + 1` rows and about `max_bytes` of values are read; the transaction is always rolled back. A
client-side watchdog cancels a statement the engine failed to stop shortly after the deadline.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import PoolProxiedConnection

from catalog.connectors.errors import driver_message
from workers.sql.capping import capped_mysql, capped_postgres, capped_sqlite, describe_sql
from workers.sql.engines import FAMILY, PG_READ_ROLE, PG_SUPERUSER, PG_TEMP_LIMIT, family_of
from workers.sql.limits import MAX_CELL_CHARS, SQLITE_MAX_LENGTH, SqlLimits
from workers.sql.plain_read import NotPlainRead, check_plain_read
from workers.sql.sqlite_authorizer import read_only_authorizer

#: The watchdog cancels this long after the deadline, should the engine's own timeout not have fired.
WATCHDOG_GRACE_S = 2.0
SQLITE_PROGRESS_STEPS = 10_000
PG_QUERY_CANCELED = "57014"
#: ER_STATEMENT_TIMEOUT (MariaDB), ER_QUERY_TIMEOUT (MySQL), ER_QUERY_INTERRUPTED (KILL QUERY by the watchdog).
MYSQL_TIMEOUT_CODES = frozenset({1969, 3024, 1317})
#: How SQLite reports an action, table or column its authorizer denied.
_SQLITE_DENIED = ("not authorized", "is prohibited", "vtable constructor failed")
#: ER_DUP_FIELDNAME and ER_PARSE_ERROR: a statement that cannot be described through a derived table.
MYSQL_UNWRAPPABLE = frozenset({1060, 1064})
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


def execute_read_only(
    engine: Engine, sql: str, limits: SqlLimits, *, catalog: bool = False, params: Mapping[str, Any] | None = None
) -> Fetched:
    """Run `sql` as one statement in a read-only transaction on `engine` (an engine from `workers.sql.engines`).

    `catalog`: the user's role grants reads of the system catalog (SQLite's schema table and table-valued pragmas;
    the server engines' catalogs are readable by the account anyway). Raises ExecutionRefused for text that is not
    one plain query, ExecutionTimeout past `limits.timeout_s` and ExecutionError for anything else the database
    reports. A SQLite connection goes back to the pool rolled back; a server connection is always discarded.
    `params`: values bound to the placeholders in `sql`, written in the driver's style (`:name` on SQLite,
    `%(name)s` on the server engines, where a literal `%` is then written `%%`).
    """
    try:
        sql = check_plain_read(sql, family_of(engine))
    except NotPlainRead as exc:
        raise ExecutionRefused(f"refused: {exc}") from exc
    return run_read_only(engine, sql, limits, catalog=catalog, params=params)


def run_read_only(
    engine: Engine, sql: str, limits: SqlLimits, *, catalog: bool = False, params: Mapping[str, Any] | None = None
) -> Fetched:
    """The engine's own part of `execute_read_only`, without the text check: whatever `sql` is, the session is
    read-only, limited in time and space, and discarded afterwards (tests call it with writes to prove that)."""
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
        fetched, keep = run(engine, raw, sql, _Run(limits, catalog, dict(params) if params is not None else None))
        return fetched
    except ExecutionError as exc:
        keep = exc.reusable
        raise
    finally:
        if keep and family == "sqlite":
            raw.close()
        else:
            raw.invalidate()  # a fresh session per statement: nothing the statement set or locked outlives it


@dataclass(frozen=True)
class _Run:
    limits: SqlLimits
    catalog: bool
    params: dict[str, Any] | None = None


# --- fetching --------------------------------------------------------------------------------------------------


class _Budget:
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


def _run_postgres(engine: Engine, raw: PoolProxiedConnection, sql: str, run: _Run) -> tuple[Fetched, bool]:
    import psycopg

    conn = raw.driver_connection
    assert isinstance(conn, psycopg.Connection)
    limits = run.limits
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
            setup.execute(f"SET LOCAL work_mem = '{limits.work_mem_bytes // 1024}kB'")
            if raw.info.get(PG_TEMP_LIMIT):
                setup.execute(f"SET LOCAL temp_file_limit = '{limits.temp_bytes // 1024}kB'")
            if raw.info.get(PG_SUPERUSER):
                if not raw.info.get(PG_READ_ROLE):
                    raise ExecutionRefused(
                        "refused: the source's account is a superuser and this server has no pg_read_all_data role "
                        "to run the query as; ask the operator to configure a read-only account",
                        reusable=True,
                    )
                setup.execute("SET LOCAL ROLE pg_read_all_data")
            capped = sql
            setup.execute("SAVEPOINT ts_describe")
            try:
                with watchdog:
                    setup.execute(describe_sql(sql), run.params)
                capped = capped_postgres(sql, [(d.name, int(d.type_code)) for d in setup.description or ()])
            except psycopg.errors.SyntaxError:
                # Not a query that can be read from (and so not a read): it runs as it is, and the read-only
                # transaction answers for it.
                setup.execute("ROLLBACK TO SAVEPOINT ts_describe")
        cursor = conn.cursor()
        with _Watchdog(limits.timeout_s, conn.cancel_safe) as watchdog:
            stream = cast(Generator[Any, None, None], cursor.stream(capped, run.params))
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
    return budget.fetched(columns), True


# --- MariaDB / MySQL -----------------------------------------------------------------------------------------------


def _run_mysql(engine: Engine, raw: PoolProxiedConnection, sql: str, run: _Run) -> tuple[Fetched, bool]:
    import pymysql  # type: ignore[import-untyped]
    from pymysql.cursors import SSCursor  # type: ignore[import-untyped]

    conn = raw.driver_connection
    assert isinstance(conn, pymysql.connections.Connection)
    mariadb = raw.info.get(FAMILY) != "mysql"
    limits = run.limits
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
            # In-memory temporary tables (GROUP BY, DISTINCT, derived tables) are capped; larger ones go to disk.
            size = limits.temp_bytes
            setup.execute(f"SET SESSION tmp_table_size = {size}, max_heap_table_size = {size}")
            setup.execute("SET SESSION TRANSACTION READ ONLY")
            setup.execute("START TRANSACTION READ ONLY")
            capped = sql
            try:
                with watchdog:
                    setup.execute(describe_sql(sql), run.params)
                capped = capped_mysql(sql, [(str(d[0]), int(d[1])) for d in setup.description or ()])
            except pymysql.Error as exc:
                # Duplicate column names cannot go through a derived table (such a row stays within the server's
                # max_allowed_packet), and what does not parse inside one is not a read: either runs as it is, and
                # the read-only transaction answers for it. Any other error is the statement's own.
                if not exc.args or exc.args[0] not in MYSQL_UNWRAPPABLE:
                    raise
        cursor = SSCursor(conn)
        try:
            with _Watchdog(limits.timeout_s, kill) as watchdog:
                cursor.execute(capped, run.params)
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
    return budget.fetched(columns), finished


def _abandon_unbuffered(cursor: Any) -> None:
    """Let go of an unbuffered result with rows left unread, without reading them (PyMySQL would drain every row
    when the cursor or result is collected); the caller then discards the connection, which ends the statement."""
    result = cursor._result
    if result is not None:
        result.unbuffered_active = False
    cursor.connection = None


# --- SQLite --------------------------------------------------------------------------------------------------------


def _run_sqlite(engine: Engine, raw: PoolProxiedConnection, sql: str, run: _Run) -> tuple[Fetched, bool]:
    conn = raw.driver_connection
    assert isinstance(conn, sqlite3.Connection)
    limits = run.limits
    budget = _Budget(limits)
    deadline = time.monotonic() + limits.timeout_s
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, SQLITE_PROGRESS_STEPS)
    try:
        conn.rollback()
        cursor = conn.cursor()
        try:
            conn.set_authorizer(read_only_authorizer(catalog=run.catalog))
            capped = sql
            try:
                cursor.execute(describe_sql(sql), run.params or ())
                capped = capped_sqlite(sql, [str(d[0]) for d in cursor.description or ()])
            except sqlite3.OperationalError as exc:
                # What does not parse inside a subquery is not a read: it runs as it is, and the authorizer and
                # query_only answer for it.
                if "syntax error" not in str(exc):
                    raise
            cursor.execute(capped, run.params or ())
            conn.set_authorizer(None)  # consulted while statements are prepared; rows are read without it
            columns = [str(d[0]) for d in cursor.description or ()]
            _drain(iter(cursor.fetchone, None), budget)
        finally:
            conn.set_authorizer(None)
            cursor.close()
        conn.rollback()
    except sqlite3.Error as exc:
        usable = _rollback_quietly(conn.rollback)
        if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
            raise ExecutionTimeout(_timeout_message(limits), reusable=usable) from exc
        if isinstance(exc, sqlite3.DataError | sqlite3.OperationalError) and "too big" in str(exc):
            raise ExecutionError(
                f"a value or row would be larger than {SQLITE_MAX_LENGTH} bytes; select part of it (substr) or "
                "aggregate",
                reusable=usable,
            ) from exc
        if any(sign in str(exc) for sign in _SQLITE_DENIED):  # the authorizer said no
            raise ExecutionRefused(
                "refused: this connection is read-only and only reads tables and views (no PRAGMA, schema "
                "tables or writes)",
                reusable=usable,
            ) from exc
        raise ExecutionError(_first_line(exc, engine), reusable=usable) from exc
    finally:
        conn.set_progress_handler(None, 0)
    return budget.fetched(columns), True


def _rollback_quietly(rollback: Callable[[], None]) -> bool:
    try:
        rollback()
    except Exception:
        return False
    return True


def _first_line(exc: BaseException, engine: Engine) -> str:
    return driver_message(exc, _password(engine))


_RUNNERS: dict[str, Callable[[Engine, PoolProxiedConnection, str, _Run], tuple[Fetched, bool]]] = {
    "postgresql": _run_postgres,
    "mysql": _run_mysql,
    "sqlite": _run_sqlite,
}
