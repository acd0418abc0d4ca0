"""Running one statement on SQLite (SPEC §7, layers 3 and 4): a `mode=ro` connection with `query_only`, the
read-only authorizer while the statement is prepared, a progress handler that interrupts it at the deadline, and
the statement's own functions (`ts_fits`, `ts_like`, and `ts_mask_hash` keyed when a `hash` mask applies)."""

from __future__ import annotations

import contextlib
import sqlite3
import time

from sqlalchemy import Engine
from sqlalchemy.pool import PoolProxiedConnection

from core.access.mask_key import MaskKey
from workers.sql import engine_limits
from workers.sql.capping import capped_sqlite, describe_sql
from workers.sql.column_masks import SQLITE_HASH_FUNCTION, keyed_sqlite_hash
from workers.sql.engines import cap_sqlite_heap
from workers.sql.exact_compare import SQLITE_LIKE_FUNCTION, like_exactly
from workers.sql.execution import (
    Budget,
    ExecutionError,
    ExecutionRefused,
    ExecutionTimeout,
    Fetched,
    RunSpec,
    drain,
    rollback_quietly,
    timeout_message,
)
from workers.sql.limits import SQLITE_MAX_LENGTH
from workers.sql.sqlite_authorizer import read_only_authorizer
from workers.sql.sqlite_printf import FITS_FUNCTION, fits

SQLITE_PROGRESS_STEPS = 10_000
#: How SQLite reports an action, table or column its authorizer denied.
_SQLITE_DENIED = ("not authorized", "is prohibited", "vtable constructor failed")


def run_sqlite(engine: Engine, raw: PoolProxiedConnection, sql: str, run: RunSpec) -> tuple[Fetched, bool]:
    conn = raw.driver_connection
    assert isinstance(conn, sqlite3.Connection)
    limits = run.limits
    budget = Budget(limits)
    deadline = time.monotonic() + limits.timeout_s
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, SQLITE_PROGRESS_STEPS)
    cap_sqlite_heap(conn)  # again per statement: the limit is the process's, and anything may have changed it
    _register_functions(conn, run.mask_key)
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
            drain(iter(cursor.fetchone, None), budget)
        finally:
            conn.set_authorizer(None)
            cursor.close()
        conn.rollback()
    except MemoryError as exc:  # SQLITE_NOMEM: the statement's temporary data reached the process-wide heap limit
        usable = rollback_quietly(conn.rollback)
        raise ExecutionError(engine_limits.sqlite_memory_message(), reusable=usable) from exc
    except sqlite3.Error as exc:
        usable = rollback_quietly(conn.rollback)
        if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
            raise ExecutionTimeout(timeout_message(limits), reusable=usable) from exc
        if isinstance(exc, sqlite3.OperationalError) and "user-defined function raised exception" in str(exc):
            # Only ts_fits raises: printf() or format() gave NULL for a text too long.
            raise ExecutionError(
                engine_limits.cut_result(
                    f"printf() or format() would build a text longer than {SQLITE_MAX_LENGTH} bytes and gave NULL; "
                    "build shorter values or aggregate"
                ),
                reusable=usable,
            ) from exc
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
        raise run.failure(exc, engine, usable=usable) from run.cause(exc)
    finally:
        conn.set_progress_handler(None, 0)
        _unregister_functions(conn)
    return budget.fetched(columns), True


def _register_functions(conn: sqlite3.Connection, key: MaskKey | None) -> None:
    """The statement's own functions: `ts_fits` and `ts_like` always, `ts_mask_hash` keyed when a `hash` mask
    applies (without a key it does not exist, so nothing can hash unkeyed)."""
    conn.create_function(FITS_FUNCTION, 2, fits, deterministic=True)
    conn.create_function(SQLITE_LIKE_FUNCTION, 2, like_exactly, deterministic=True)
    conn.create_function(SQLITE_LIKE_FUNCTION, 3, like_exactly, deterministic=True)
    if key is not None:
        conn.create_function(SQLITE_HASH_FUNCTION, 1, keyed_sqlite_hash(key), deterministic=True)


def _unregister_functions(conn: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        conn.create_function(FITS_FUNCTION, 2, None)
        conn.create_function(SQLITE_LIKE_FUNCTION, 2, None)
        conn.create_function(SQLITE_LIKE_FUNCTION, 3, None)
        conn.create_function(SQLITE_HASH_FUNCTION, 1, None)
