"""Running one statement read-only, under a timeout, fetching a bounded result (SPEC §7, layers 3 and 4).

This layer holds on its own, whatever text it is given:
- Every engine: the text must read as one plain query (`workers.sql.plain_read`), so SET, PRAGMA, COPY, DDL, DML,
  SELECT ... INTO and executable comments never reach the driver; long values are cut on the database side
  (`workers.sql.capping`) before a row reaches the worker.
- PostgreSQL: `SET TRANSACTION READ ONLY`, `SET LOCAL statement_timeout`, `work_mem` and, where the account may set
  it, `temp_file_limit`; a superuser account drops to the `pg_read_all_data` role for the statement (no dblink to
  itself, no server files, no programs). The statement goes through the extended protocol (one statement per call)
  in single-row streaming mode, and leaving early cancels it.
- MariaDB/MySQL: `START TRANSACTION READ ONLY` with `max_statement_time` (MySQL: `max_execution_time`), capped
  temporary tables in memory and (MariaDB) on disk, `max_join_size`, no silent cut of recursive CTEs
  (`max_recursive_iterations`); no multi-statement support; an unbuffered cursor streams rows. A statement that
  finished with a warning that its result was cut (a NULL for a value too long, GROUP_CONCAT cut, a recursion
  stopped) fails instead (`workers.sql.engine_limits`).
- SQLite: a `mode=ro` file with `query_only`, a length limit and temporary data in capped memory; an authorizer
  (`workers.sql.sqlite_authorizer`) allows reads only; the driver runs one statement per call; a progress handler
  interrupts it at the deadline. `ts_mask_hash` (keyed) and `ts_fits` (`workers.sql.sqlite_printf`) are registered
  for the statement only.
With a mask key (a `hash` mask applies), error messages are scrubbed of every form of the key
(`workers.sql.secret_text`) and keep no driver exception behind them.
A server session that ran the model's statement is never used again (a fresh session per statement), so session
settings, variables, temporary tables and advisory locks (`GET_LOCK`, `pg_advisory_lock`) end with the call.
At most `max_rows + 1` rows and about `max_bytes` of values are read; the transaction is always rolled back. A
client-side watchdog cancels a statement the engine failed to stop shortly after the deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any, cast

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import PoolProxiedConnection

from catalog.connectors.errors import driver_message
from core.access.mask_key import MaskKey
from workers.sql import engine_limits
from workers.sql.capping import capped_mysql, capped_postgres, describe_sql
from workers.sql.engines import FAMILY, PG_READ_ROLE, PG_SUPERUSER, PG_TEMP_LIMIT, family_of
from workers.sql.execution import (
    Budget,
    ExecutionError,
    ExecutionRefused,
    ExecutionTimeout,
    Fetched,
    RunSpec,
    Watchdog,
    drain,
    password_of,
    rollback_quietly,
    timeout_message,
)
from workers.sql.limits import MARIADB_RECURSIVE_ITERATIONS, SqlLimits
from workers.sql.plain_read import NotPlainRead, check_plain_read
from workers.sql.run_sqlite import run_sqlite

__all__ = ["ExecutionError", "ExecutionRefused", "ExecutionTimeout", "Fetched", "execute_read_only", "run_read_only"]

PG_QUERY_CANCELED = "57014"
#: ER_STATEMENT_TIMEOUT (MariaDB), ER_QUERY_TIMEOUT (MySQL), ER_QUERY_INTERRUPTED (KILL QUERY by the watchdog).
MYSQL_TIMEOUT_CODES = frozenset({1969, 3024, 1317})
#: ER_DUP_FIELDNAME and ER_PARSE_ERROR: a statement that cannot be described through a derived table.
MYSQL_UNWRAPPABLE = frozenset({1060, 1064})


def execute_read_only(
    engine: Engine,
    sql: str,
    limits: SqlLimits,
    *,
    catalog: bool = False,
    params: Mapping[str, Any] | None = None,
    mask_key: MaskKey | None = None,
) -> Fetched:
    """Run `sql` as one statement in a read-only transaction on `engine` (an engine from `workers.sql.engines`).

    `catalog`: the user's role grants reads of the system catalog (SQLite's schema table and table-valued pragmas;
    the server engines' catalogs are readable by the account anyway). Raises ExecutionRefused for text that is not
    one plain query, ExecutionTimeout past `limits.timeout_s` and ExecutionError for anything else the database
    reports. A SQLite connection goes back to the pool rolled back; a server connection is always discarded.
    `params`: values bound to the placeholders in `sql`, written in the driver's style (`:name` on SQLite,
    `%(name)s` on the server engines, where a literal `%` is then written `%%`). `mask_key`: the key of the `hash`
    masks in `sql` (`PolicedQuery.mask_key`).
    """
    try:
        sql = check_plain_read(sql, family_of(engine))
    except NotPlainRead as exc:
        raise ExecutionRefused(f"refused: {exc}") from exc
    return run_read_only(engine, sql, limits, catalog=catalog, params=params, mask_key=mask_key)


def run_read_only(
    engine: Engine,
    sql: str,
    limits: SqlLimits,
    *,
    catalog: bool = False,
    params: Mapping[str, Any] | None = None,
    mask_key: MaskKey | None = None,
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
        raise ExecutionError(f"cannot connect to the database: {driver_message(exc, password_of(engine))}") from exc
    keep = False
    try:
        fetched, keep = run(
            engine, raw, sql, RunSpec(limits, catalog, dict(params) if params is not None else None, mask_key)
        )
        return fetched
    except ExecutionError as exc:
        keep = exc.reusable
        raise
    finally:
        if keep and family == "sqlite":
            raw.close()
        else:
            raw.invalidate()  # a fresh session per statement: nothing the statement set or locked outlives it


# --- PostgreSQL ----------------------------------------------------------------------------------------------------


def _run_postgres(engine: Engine, raw: PoolProxiedConnection, sql: str, run: RunSpec) -> tuple[Fetched, bool]:
    import psycopg

    conn = raw.driver_connection
    assert isinstance(conn, psycopg.Connection)
    limits = run.limits
    budget = Budget(limits)
    columns: list[str] = []
    milliseconds = max(1, round(limits.timeout_s * 1000))
    watchdog = Watchdog(limits.timeout_s, conn.cancel_safe)
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
        with Watchdog(limits.timeout_s, conn.cancel_safe) as watchdog:
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
        usable = rollback_quietly(conn.rollback)
        sqlstate = getattr(exc, "sqlstate", None)
        if sqlstate == PG_QUERY_CANCELED or watchdog.fired:
            raise ExecutionTimeout(timeout_message(limits), reusable=usable) from exc
        limit = engine_limits.postgres_limit_message(sqlstate, str(exc), limits)
        if limit is not None:
            raise ExecutionError(limit, reusable=usable) from run.cause(exc)
        raise run.failure(exc, engine, usable=usable) from run.cause(exc)
    return budget.fetched(columns), True


# --- MariaDB / MySQL -----------------------------------------------------------------------------------------------


def _run_mysql(engine: Engine, raw: PoolProxiedConnection, sql: str, run: RunSpec) -> tuple[Fetched, bool]:
    import pymysql  # type: ignore[import-untyped]
    from pymysql.cursors import SSCursor  # type: ignore[import-untyped]

    conn = raw.driver_connection
    assert isinstance(conn, pymysql.connections.Connection)
    mariadb = raw.info.get(FAMILY) != "mysql"
    limits = run.limits
    budget = Budget(limits)
    finished = False
    thread_id = conn.thread_id()

    def kill() -> None:
        with engine.connect() as other:
            other.exec_driver_sql(f"KILL QUERY {int(thread_id)}")

    watchdog = Watchdog(limits.timeout_s, kill)
    try:
        conn.rollback()
        with conn.cursor() as setup:
            if mariadb:
                setup.execute(f"SET SESSION max_statement_time = {limits.timeout_s:.3f}")
            else:
                setup.execute(f"SET SESSION max_execution_time = {max(1, round(limits.timeout_s * 1000))}")
            # Temporary tables (GROUP BY, DISTINCT, derived tables, recursive CTEs) are capped in memory, and on
            # MariaDB on disk too; a statement expected to examine too many rows is refused before it runs.
            size = limits.temp_bytes
            setup.execute(f"SET SESSION tmp_table_size = {size}, max_heap_table_size = {size}")
            setup.execute(f"SET SESSION max_join_size = {limits.max_examined_rows}")
            setup.execute(f"SET SESSION group_concat_max_len = {engine_limits.GROUP_CONCAT_MAX_LEN}")
            if mariadb:
                setup.execute(f"SET SESSION tmp_disk_table_size = {size}")
                setup.execute(f"SET SESSION max_recursive_iterations = {MARIADB_RECURSIVE_ITERATIONS}")
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
            with Watchdog(limits.timeout_s, kill) as watchdog:
                cursor.execute(capped, run.params)
                columns = [str(d[0]) for d in cursor.description or ()]
                finished = drain(iter(cursor.fetchone, None), budget)
        finally:
            if finished:
                cursor.close()
            else:
                # Unread rows would have to be read off the wire before the connection could be used again.
                _abandon_unbuffered(cursor)
        if finished:
            # Read before the rollback, which clears them. A result cut short by the row budget cannot be asked
            # (its rows were not all read); it is reported as truncated.
            cut = engine_limits.mysql_cut_result(conn.show_warnings())
            conn.rollback()
            if cut is not None:
                raise ExecutionError(engine_limits.cut_result(cut), reusable=True)
    except pymysql.Error as exc:
        code = exc.args[0] if exc.args else None
        # An error packet ends the result, so the connection is usable where it can still roll back.
        usable = conn.open and rollback_quietly(conn.rollback)
        if code in MYSQL_TIMEOUT_CODES or watchdog.fired:
            raise ExecutionTimeout(timeout_message(limits), reusable=usable) from exc
        limit = engine_limits.mysql_limit_message(code, limits)
        if limit is not None:
            raise ExecutionError(limit, reusable=usable) from run.cause(exc)
        raise run.failure(exc, engine, usable=usable) from run.cause(exc)
    return budget.fetched(columns), finished


def _abandon_unbuffered(cursor: Any) -> None:
    """Let go of an unbuffered result with rows left unread, without reading them (PyMySQL would drain every row
    when the cursor or result is collected); the caller then discards the connection, which ends the statement."""
    result = cursor._result
    if result is not None:
        result.unbuffered_active = False
    cursor.connection = None


_RUNNERS: dict[str, Callable[[Engine, PoolProxiedConnection, str, RunSpec], tuple[Fetched, bool]]] = {
    "postgresql": _run_postgres,
    "mysql": _run_mysql,
    "sqlite": run_sqlite,
}
