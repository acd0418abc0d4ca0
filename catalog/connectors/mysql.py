"""MariaDB and MySQL: read-only sessions, server-side statement timeouts, TABLE_ROWS, and key-range sampling."""

from __future__ import annotations

import math
from collections.abc import Sequence
from random import Random
from typing import Any

from sqlalchemy import URL, Connection, Engine, create_engine, event, func, select, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql.elements import ColumnElement

from catalog.connectors.base import ColumnInfo, Sample, TableInfo
from catalog.connectors.generic import GenericConnector
from catalog.connectors.sampling import BINARY_CUT, TEXT_CUT, const, read_runs, source, thin

CONNECT_TIMEOUT_S = 5
#: ER_STATEMENT_TIMEOUT (MariaDB max_statement_time) and ER_QUERY_TIMEOUT (MySQL max_execution_time).
TIMEOUT_CODES = frozenset({1969, 3024})
#: Drivers that accept a client-side read timeout, a backstop should the server-side one not fire.
READ_TIMEOUT_DRIVERS = ("pymysql", "mysqldb")


class MysqlConnector(GenericConnector):
    def _create_engine(self, url: URL) -> Engine:
        self._database = url.database
        args: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S}
        if url.get_driver_name() in READ_TIMEOUT_DRIVERS:
            args["read_timeout"] = math.ceil(self.statement_timeout_s) + 30
        return create_engine(url, connect_args=args, pool_pre_ping=True)

    def _install_session_settings(self, engine: Engine) -> None:
        seconds = self.statement_timeout_s

        def on_connect(dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry) -> None:
            cursor = dbapi_conn.cursor()
            try:
                # Session characteristics apply to every later transaction, including implicit autocommit ones.
                cursor.execute("SET SESSION TRANSACTION READ ONLY")
                cursor.execute("SELECT VERSION()")
                row = cursor.fetchone()
                if row is not None and "mariadb" in str(row[0]).lower():
                    cursor.execute(f"SET SESSION max_statement_time = {seconds:.3f}")
                else:
                    # MySQL proper limits SELECT statements only, in milliseconds.
                    cursor.execute(f"SET SESSION max_execution_time = {max(1, round(seconds * 1000))}")
            finally:
                cursor.close()
            dbapi_conn.rollback()

        event.listen(engine, "connect", on_connect)

    def _timeout_error(self, orig: BaseException) -> bool:
        args: tuple[Any, ...] = tuple(getattr(orig, "args", ()))
        return bool(args) and args[0] in TIMEOUT_CODES

    def _read_version(self, conn: Connection) -> str:
        return str(conn.execute(text("SELECT VERSION()")).scalar_one())

    def _engine_name(self) -> str:
        return "mariadb" if getattr(self.sa_engine.dialect, "is_mariadb", False) else "mysql"

    def _schemas(self, inspector: Any) -> list[str | None]:
        # A MySQL "schema" is a database: a URL that names one is a source about that database alone.
        return [None] if self._database else super()._schemas(inspector)

    def _statistics(self, conn: Connection, info: TableInfo) -> tuple[int | None, str | None]:
        """InnoDB's TABLE_ROWS: an estimate kept by the storage engine, refreshed by ANALYZE TABLE."""
        found = conn.execute(
            text(
                "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES"
                " WHERE TABLE_SCHEMA = COALESCE(:schema, DATABASE()) AND TABLE_NAME = :name"
            ),
            {"schema": info.ref.schema, "name": info.ref.name},
        )
        # information_schema compares names without regard to case; the table's own spelling decides.
        estimates = [row[1] for row in found if row[0] == info.ref.name]
        return (int(estimates[0]) if estimates and estimates[0] is not None else None), None

    def _cut(self, col: ColumnElement[Any], info: ColumnInfo) -> ColumnElement[Any]:
        if info.family == "text" and (info.max_length is None or info.max_length > TEXT_CUT):
            return func.left(col, const(TEXT_CUT))
        if info.family == "binary":
            return func.left(col, const(BINARY_CUT))  # LEFT counts bytes on a binary string
        return col

    def _spread(
        self, conn: Connection, info: TableInfo, picked: Sequence[ColumnInfo], limit: int, rng: Random
    ) -> Sample | None:
        """Short runs of rows from random starting keys, read through the primary key's index (a single integer
        key only; other keys have no cheap random starting point, and the table is read with a plain LIMIT)."""
        if len(info.primary_key) != 1:
            return None
        key_info = next((c for c in info.columns if c.name == info.primary_key[0]), None)
        if key_info is None or key_info.family != "integer":
            return None
        from_ = source(info.ref, list(dict.fromkeys([key_info.name, *(c.name for c in picked)])))
        key = from_.c[key_info.name]
        low, high = conn.execute(select(func.min(key), func.max(key)).select_from(from_)).one()
        names = tuple(c.name for c in picked)
        if low is None or high is None:
            return Sample(columns=names, complete=True, method="key-ranges")
        statement = select(key, *self._select_list(from_, picked)).select_from(from_)
        rows = read_runs(conn, statement, key, int(low), int(high), limit, rng)
        return Sample(columns=names, rows=[r[1:] for r in thin(rows, limit, rng)], method="key-ranges")
