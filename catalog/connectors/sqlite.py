"""SQLite: a read-only file, a progress-handler timeout, rowid statistics and rowid sampling."""

from __future__ import annotations

import contextlib
import math
import re
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from random import Random
from typing import Any

from sqlalchemy import (
    URL,
    Connection,
    Engine,
    bindparam,
    case,
    create_engine,
    event,
    func,
    literal_column,
    select,
    text,
)
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql.elements import ColumnClause, ColumnElement

from catalog.connectors.base import ColumnInfo, Sample, TableInfo, TableRef
from catalog.connectors.generic import GenericConnector
from catalog.connectors.sampling import BINARY_CUT, TEXT_CUT, batches, const, draw_ids, fetch, read_runs, source, thin
from catalog.connectors.sqlite_table_sql import read_table_sql_once
from core.errors import SourceError

BUSY_TIMEOUT_S = 5
#: Virtual-machine steps between two looks at the clock: frequent enough to stop within milliseconds.
PROGRESS_STEPS = 10_000
#: At most this many rowids are probed per requested row, so a table with huge gaps in its rowids stays cheap.
PROBES_PER_ROW = 20
ROWID_ALIASES = ("rowid", "_rowid_", "oid")
WITHOUT_ROWID = re.compile(r"\bWITHOUT\s+ROWID\b", re.IGNORECASE)
_DEADLINE = "tablescout_deadline"


class _Deadline:
    """The end of the statement now running on one connection; the progress handler aborts once it has passed."""

    def __init__(self) -> None:
        self.at: float | None = None

    def arm(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def disarm(self) -> None:
        self.at = None

    def passed(self) -> int:
        return 1 if self.at is not None and time.monotonic() > self.at else 0


class SqliteConnector(GenericConnector):
    def __init__(self, url: URL, *, statement_timeout_s: float = 10.0) -> None:
        self._with_stat: dict[str, bool] = {}  # schema → whether ANALYZE left row counts (sqlite_stat1) in it
        self._table_list: dict[str, dict[str, tuple[str, int]]] = {}  # schema → its tables (`_listed`)
        super().__init__(url, statement_timeout_s=statement_timeout_s)

    def _create_engine(self, url: URL) -> Engine:
        path = Path(url.database or "")
        if not path.is_file():
            raise SourceError(f"SQLite database file {path} does not exist")
        uri = f"{path.resolve().as_uri()}?mode=ro"

        def connect() -> sqlite3.Connection:
            # The pool hands a connection to one thread at a time, so it may move between threads.
            return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)

        engine = create_engine(URL.create("sqlite", database=str(path)), creator=connect)
        read_table_sql_once(engine)
        return engine

    def _install_session_settings(self, engine: Engine) -> None:
        timeout = self.statement_timeout_s

        def on_connect(dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry) -> None:
            deadline = _Deadline()
            record.info[_DEADLINE] = deadline
            dbapi_conn.set_progress_handler(deadline.passed, PROGRESS_STEPS)
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA query_only = ON")  # mode=ro already refuses writes; this also covers ATTACH
            cursor.close()

        def before_execute(conn: Connection, *args: Any) -> None:
            # Armed per statement and left armed while its rows are fetched; disarmed when the connection is idle.
            deadline = conn.info.get(_DEADLINE)
            if isinstance(deadline, _Deadline):
                deadline.arm(timeout)

        def on_checkin(dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry) -> None:
            deadline = record.info.get(_DEADLINE)
            if isinstance(deadline, _Deadline):
                deadline.disarm()

        event.listen(engine, "connect", on_connect)
        event.listen(engine, "before_cursor_execute", before_execute)
        event.listen(engine, "checkin", on_checkin)

    def _timeout_error(self, orig: BaseException) -> bool:
        # Only the progress handler interrupts these connections; nothing here calls interrupt().
        return isinstance(orig, sqlite3.OperationalError) and str(orig) == "interrupted"

    def _read_version(self, conn: Connection) -> str:
        return str(conn.execute(text("SELECT sqlite_version()")).scalar_one())

    def _cut(self, col: ColumnElement[Any], info: ColumnInfo) -> ColumnElement[Any]:
        # Declared types bind nothing in SQLite, so every column is cut by the storage class of each value.
        kind = func.typeof(col)
        return case(
            (kind == literal_column("'text'"), func.substr(col, const(1), const(TEXT_CUT))),
            (kind == literal_column("'blob'"), func.substr(col, const(1), const(BINARY_CUT))),
            else_=col,
        )

    def _rowid(self, conn: Connection, info: TableInfo) -> str | None:
        """A name that reaches the table's rowid (one its columns do not shadow), or None for a table without."""
        schema = self.sa_engine.dialect.identifier_preparer.quote(info.ref.schema or "main")
        shape = None
        with contextlib.suppress(DBAPIError):  # SQLite before 3.37 has no table_list: read the CREATE statement
            shape = self._listed(conn, info.ref.schema or "main").get(info.ref.name)
        if shape is not None:
            if shape[0] != "table" or shape[1]:
                return None
        else:
            found = conn.execute(
                text(f"SELECT sql FROM {schema}.sqlite_master WHERE type = 'table' AND name = :name"),
                {"name": info.ref.name},
            ).first()
            sql = str(found[0]) if found and found[0] else ""
            if not sql or sql.upper().startswith("CREATE VIRTUAL") or WITHOUT_ROWID.search(sql):
                return None
        taken = {c.name.lower() for c in info.columns}
        return next((alias for alias in ROWID_ALIASES if alias not in taken), None)

    def _listed(self, conn: Connection, schema: str) -> dict[str, tuple[str, int]]:
        """Each table of `schema` with its type and whether it is WITHOUT ROWID, read once: the pragma lists every
        attached schema at every call, filtered or not."""
        if schema not in self._table_list:
            rows = conn.execute(
                text("SELECT name, type, wr FROM pragma_table_list WHERE schema = :schema"), {"schema": schema}
            )
            self._table_list[schema] = {str(r[0]): (str(r[1]), int(r[2])) for r in rows}
        return self._table_list[schema]

    def _statistics(self, conn: Connection, info: TableInfo) -> tuple[int | None, str | None]:
        """ANALYZE's row count where sqlite_stat1 has one, else the rowid span: an upper bound read from the b-tree's
        two ends, exact for a table that was only ever appended to."""
        ref = info.ref
        schema = self.sa_engine.dialect.identifier_preparer.quote(ref.schema or "main")
        if schema not in self._with_stat:  # once per schema: the lookup scans the whole schema table
            self._with_stat[schema] = bool(
                conn.execute(
                    text(f"SELECT count(*) FROM {schema}.sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'")
                ).scalar_one()
            )
        if self._with_stat[schema]:
            stats = conn.execute(text(f"SELECT stat FROM {schema}.sqlite_stat1 WHERE tbl = :name"), {"name": ref.name})
            counts = [int(str(row[0]).split()[0]) for row in stats if row[0] and str(row[0]).split()[0].isdigit()]
            if counts:
                return max(counts), None
        alias = self._rowid(conn, info)
        if alias is None:
            return None, None
        bounds = self._bounds(conn, ref, alias)
        return (bounds[1] - bounds[0] + 1 if bounds else 0), None

    def _bounds(self, conn: Connection, ref: TableRef, alias: str) -> tuple[int, int] | None:
        """The smallest and largest rowid, None for an empty table.

        Two subqueries in one statement: SQLite answers a lone min() or max() from one end of the b-tree, but both
        in one SELECT by a scan. Written as text: the statement differs for every table, so SQLAlchemy would compile
        it anew each time (a millisecond, a third of describing a table).
        """
        quote = self.sa_engine.dialect.identifier_preparer.quote_identifier
        name = quote(ref.name) if ref.schema is None else f"{quote(ref.schema)}.{quote(ref.name)}"
        row = conn.exec_driver_sql(f"SELECT (SELECT min({alias}) FROM {name}), (SELECT max({alias}) FROM {name})").one()
        return None if row[0] is None or row[1] is None else (int(row[0]), int(row[1]))

    def _spread(
        self, conn: Connection, info: TableInfo, picked: Sequence[ColumnInfo], limit: int, rng: Random
    ) -> Sample | None:
        """Rows at random rowids in [min, max], probed in `IN (...)` batches and topped up while rows are missing.

        Rowids with large gaps (mass deletes, explicit keys) make probes miss: once fewer than one probe in
        PROBES_PER_ROW finds a row, the rest is read as runs from random starting rowids instead.
        """
        alias = self._rowid(conn, info)
        if alias is None:
            return None
        names = tuple(c.name for c in picked)
        bounds = self._bounds(conn, info.ref, alias)
        if bounds is None:
            return Sample(columns=names, complete=True, method="rowid")
        low, high = bounds
        span = high - low + 1
        from_ = source(info.ref, [c.name for c in picked])
        rowid: ColumnClause[Any] = literal_column(alias)
        statement = select(rowid, *self._select_list(from_, picked)).select_from(from_)
        probe = statement.where(rowid.in_(bindparam("ids", expanding=True)))
        found: dict[int, tuple[Any, ...]] = {}
        tried: set[int] = set()
        budget = min(span, PROBES_PER_ROW * limit)
        density = min(1.0, (info.row_estimate or span) / span)
        method = "rowid"
        while len(found) < limit and len(tried) < budget:
            ids = draw_ids(
                rng, low, high, min(math.ceil((limit - len(found)) / density * 1.1), budget - len(tried)), tried
            )
            before = len(found)
            for batch in batches(ids):
                found.update((row[0], row) for row in fetch(conn, probe, {"ids": list(batch)}))
            density = (len(found) - before) / len(ids)
            if density < 1 / PROBES_PER_ROW:
                break
        complete = len(tried) >= span and len(found) <= limit
        if len(found) < limit and not complete:
            for row in read_runs(conn, statement, rowid, low, high, limit - len(found), rng):
                found.setdefault(row[0], row)
            method = "rowid-ranges"
        rows = sorted(thin(list(found.values()), limit, rng), key=lambda row: row[0])
        return Sample(columns=names, rows=[r[1:] for r in rows], complete=complete, method=method)
