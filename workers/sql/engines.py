"""SQLAlchemy engines for running the model's SQL on source databases: one pooled engine per source and process.

Every connection is read-only before any statement runs (SPEC §7, layer 3): SQLite opens the file with `mode=ro`,
sets `PRAGMA query_only`, allows no attached databases and no string, blob or row over `SQLITE_MAX_LENGTH` bytes,
and keeps temporary data in memory under the process-wide `SQLITE_HEAP_LIMIT`;
MariaDB/MySQL sessions default to read-only transactions, without multi-statement support, and with backslash
escapes on (as the guard's parser assumes); PostgreSQL sessions default to read-only transactions, and what the
account may do (superuser, temp_file_limit) is noted per connection. The executor (`workers.sql.readonly`) adds a
read-only transaction, a timeout and space limits per statement on top.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Engine, create_engine, event
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import ConnectionPoolEntry

from catalog import source_url
from core.config.settings import Settings
from core.errors import SourceError
from core.store.models import Source
from workers.sql.limits import SQLITE_HEAP_LIMIT, SQLITE_MAX_LENGTH

CONNECT_TIMEOUT_S = 5
SQLITE_BUSY_TIMEOUT_S = 5
#: Key in a pooled connection's `info`: "sqlite", "mariadb", "mysql" or "postgresql".
FAMILY = "tablescout_family"
#: Keys in a PostgreSQL connection's `info`: the account is a superuser; the server has the pg_read_all_data role;
#: the account may set temp_file_limit (a superuser, or PostgreSQL 15's GRANT SET ON PARAMETER).
PG_SUPERUSER = "tablescout_pg_superuser"
PG_READ_ROLE = "tablescout_pg_read_role"
PG_TEMP_LIMIT = "tablescout_pg_temp_limit"
_PG_ACCOUNT = """
    SELECT current_setting('is_superuser') = 'on',
           to_regrole('pg_read_all_data') IS NOT NULL,
           current_setting('is_superuser') = 'on' OR (current_setting('server_version_num')::int >= 150000
               AND has_parameter_privilege('temp_file_limit', 'SET'))
"""

_engines: dict[tuple[str, str], Engine] = {}
_lock = threading.Lock()


def family_of(engine: Engine) -> str:
    """ "sqlite", "mysql" (MariaDB included) or "postgresql": which read-only and timeout mechanism applies."""
    name = engine.dialect.name
    return "mysql" if name in ("mysql", "mariadb") else name


def create_source_engine(url: URL) -> Engine:
    """A pooled engine whose connections are read-only; `url` has its placeholders expanded."""
    backend = url.get_backend_name()
    try:
        if backend == "sqlite":
            return _sqlite_engine(url)
        if backend in ("mysql", "mariadb"):
            return _mysql_engine(url)
        if backend == "postgresql":
            return _postgres_engine(url)
    except (NoSuchModuleError, ImportError, ArgumentError) as exc:
        raise SourceError(f"no SQLAlchemy driver for URL scheme {url.drivername!r}") from exc
    raise SourceError(f"running SQL on {backend} sources is not supported; use SQLite, MariaDB/MySQL or PostgreSQL")


def engine_for(settings: Settings, source: Source) -> Engine:
    """The cached engine of `source`, created on first use from the URL in the configuration file."""
    entry = settings.file.sources.get(source.name)
    if entry is None:
        raise SourceError(f"database {source.name} has no URL in {settings.config_path}; add it again")
    key = (source.name, entry.url)
    with _lock:
        found = _engines.get(key)
        if found is not None:
            return found
        url = source_url.expand(source_url.parse(entry.url), settings.environment_value)
        engine = create_source_engine(url)
        stale = [k for k in _engines if k[0] == source.name]
        for old in stale:
            _engines.pop(old).dispose()
        _engines[key] = engine
        return engine


def dispose_engines() -> None:
    """Close every cached engine's pooled connections (tests, shutdown, a changed configuration)."""
    with _lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        engine.dispose()


# --- per engine ----------------------------------------------------------------------------------------------------


def _sqlite_engine(url: URL) -> Engine:
    path = Path(url.database or "")
    if not path.is_file():
        raise SourceError(f"SQLite database file {path} does not exist")
    uri = f"{path.resolve().as_uri()}?mode=ro"

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_S, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)  # no ATTACH: the file opened is the only database
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, SQLITE_MAX_LENGTH)  # no huge string, blob or row is ever built
        # Sorts, DISTINCT, GROUP BY and materialised subqueries use memory, not temporary files, and all of SQLite's
        # memory in this process is capped: a statement past the cap fails (out of memory) instead of filling a disk.
        conn.execute("PRAGMA temp_store = MEMORY")
        cap_sqlite_heap(conn)
        return conn

    return create_engine(URL.create("sqlite", database=str(path)), creator=connect)


def cap_sqlite_heap(conn: sqlite3.Connection) -> None:
    """Set SQLite's process-wide hard heap limit to SQLITE_HEAP_LIMIT, unless a tighter one is already set."""
    row = conn.execute("PRAGMA hard_heap_limit").fetchone()
    current = int(row[0]) if row is not None else 0
    if current == 0 or current > SQLITE_HEAP_LIMIT:
        conn.execute(f"PRAGMA hard_heap_limit = {SQLITE_HEAP_LIMIT}")


def _mysql_engine(url: URL) -> Engine:
    # client_flag 0: no CLIENT_MULTI_STATEMENTS and no LOCAL INFILE, whatever the URL's query asks for.
    args: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S, "client_flag": 0, "local_infile": False}
    engine = create_engine(url, connect_args=args, pool_pre_ping=True, pool_recycle=3600)

    def on_connect(dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry) -> None:
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
            # The guard parses strings with backslash escapes; the server must read them the same way.
            cursor.execute("SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')")
            cursor.execute("SELECT VERSION()")
            row = cursor.fetchone()
            record.info[FAMILY] = "mariadb" if row is not None and "mariadb" in str(row[0]).lower() else "mysql"
        finally:
            cursor.close()
        dbapi_conn.rollback()

    event.listen(engine, "connect", on_connect)
    return engine


def _postgres_engine(url: URL) -> Engine:
    engine = create_engine(url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}, pool_pre_ping=True)

    def on_connect(dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry) -> None:
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute("SELECT set_config('default_transaction_read_only', 'on', false)")
            cursor.execute(_PG_ACCOUNT)
            account = cursor.fetchone()
            superuser, read_role, temp_limit = account if account is not None else (True, False, False)
        finally:
            cursor.close()
        dbapi_conn.commit()  # a SET made in a transaction that is rolled back would be undone
        record.info[FAMILY] = "postgresql"
        record.info[PG_SUPERUSER] = bool(superuser)
        record.info[PG_READ_ROLE] = bool(read_role)
        record.info[PG_TEMP_LIMIT] = bool(temp_limit)

    event.listen(engine, "connect", on_connect)
    return engine
