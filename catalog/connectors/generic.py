"""The connector every engine starts from: SQLAlchemy introspection, LIMIT sampling, counts and key lookups.

`GenericConnector` works on any engine SQLAlchemy has a dialect for (MSSQL, Oracle, Tibero over ODBC, ...), without
engine statistics or spread sampling. The SQLite, MariaDB/MySQL and PostgreSQL connectors subclass it and fill in
the hooks: session settings (read-only, statement timeout), the timeout error, the row estimate and partitions, how
long values are cut, and how a large table is sampled without a full scan.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from random import Random
from typing import Any

from sqlalchemy import URL, Connection, Engine, create_engine, event, func, inspect, select, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DBAPIError, NoSuchModuleError, NoSuchTableError, SQLAlchemyError
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import FromClause
from sqlglot import exp

from catalog.connectors.base import ColumnInfo, Sample, TableInfo, TableRef
from catalog.connectors.errors import SourceTimeout, driver_message
from catalog.connectors.introspection import list_refs, read_table, user_schemas
from catalog.connectors.lookup import prepare
from catalog.connectors.sampling import Rows, batches, fetch, rng_for, source
from catalog.sql_tables import TableName
from catalog.view_definitions import view_definition
from catalog.view_reads import FOLLOWED_FAMILIES, NameRefused, family_of, resolve
from core.errors import SourceError

#: sqlglot's name for each engine family whose view definitions are read.
SQLGLOT_DIALECTS = {"sqlite": "sqlite", "mysql": "mysql", "postgresql": "postgres"}
_DEFAULT_SCHEMA = {"sqlite": "SELECT 'main'", "mysql": "SELECT DATABASE()", "postgresql": "SELECT current_schema()"}


class GenericConnector:
    """A read-only connector for one source. Each call takes its own pooled connection, so calls may come from
    several threads; `sa_engine` is the SQLAlchemy engine behind it (read-only sessions where the engine has them)."""

    def __init__(self, url: URL, *, statement_timeout_s: float = 10.0) -> None:
        self.statement_timeout_s = statement_timeout_s
        self._secret = str(url.password) if url.password else None
        self._described: dict[tuple[str | None, str], TableInfo] = {}
        self.sa_engine: Engine = self._create_engine(url)
        self._install_session_settings(self.sa_engine)
        try:
            with self._session("connect to", None) as conn:
                self.version: str = self._read_version(conn)
                self.engine: str = self._engine_name()
        except BaseException:
            self.sa_engine.dispose()
            raise

    # --- the Connector protocol -------------------------------------------------------------------------------

    def list_tables(self) -> list[TableRef]:
        with self._session("list the tables of", None) as conn:
            inspector = inspect(conn)
            return self._readable(conn, list_refs(inspector, self._schemas(inspector)))

    def describe(self, ref: TableRef) -> TableInfo:
        """Catalog facts about `ref`; a view whose definition no longer resolves comes back with
        `view_definition_error` set and no columns rather than raising. What it reads is kept for the connector's
        life (a connector serves one analysis run), except such errors, which may be passing."""
        key = (ref.schema, ref.name)
        if key in self._described:
            return self._described[key]
        with self._session("describe", ref) as conn:
            try:
                info = read_table(inspect(conn), ref, self.sa_engine.dialect)
            except NoSuchTableError as exc:
                raise SourceError(f"{ref.qualified} does not exist or the account cannot see it") from exc
            except SQLAlchemyError as exc:
                if ref.kind != "view" or self._is_timeout(exc) or _lost_connection(exc):
                    raise
                return TableInfo(ref=ref, columns=(), view_definition_error=driver_message(exc, self._secret))
            if ref.kind == "table":
                estimate, parent = self._statistics(conn, info)
                info = replace(info, row_estimate=estimate, partition_of=parent)
        self._described[key] = info
        return info

    def exact_count(self, ref: TableRef) -> int:
        with self._session("count the rows of", ref) as conn:
            return int(conn.execute(select(func.count()).select_from(source(ref))).scalar_one())

    def sample(self, ref: TableRef, columns: Sequence[str], limit: int) -> Sample:
        picked = self._columns(ref, columns)
        names = tuple(c.name for c in picked)
        if limit <= 0 or not picked:
            return Sample(columns=names, method="none")
        info = self.describe(ref)
        with self._session("sample", ref) as conn:
            if ref.kind == "table" and info.row_estimate is not None and info.row_estimate <= limit:
                rows = self._first_rows(conn, ref, picked, limit + 1)
                if len(rows) <= limit:
                    return Sample(columns=names, rows=rows, complete=True, method="whole")
            if ref.kind == "table":
                spread = self._spread(conn, info, picked, limit, rng_for(ref))
                if spread is not None:
                    return spread
            rows = self._first_rows(conn, ref, picked, limit + 1)
            return Sample(columns=names, rows=rows[:limit], complete=len(rows) <= limit, method="limit")

    def count_present(self, ref: TableRef, column: str, values: Sequence[Any]) -> int:
        """Distinct stored values of `column` equal to one of `values` (after converting them to the column's type
        family), looked up in batches; the result never exceeds the number of distinct values asked about."""
        (target,) = self._columns(ref, [column])
        wanted = prepare(values, target.family)
        col = source(ref, [column]).c[column]
        found: set[Any] = set()
        with self._session("look up values in", ref) as conn:
            for batch in batches(wanted):
                found.update(row[0] for row in conn.execute(select(col).where(col.in_(batch)).distinct()))
        return min(len(found), len(wanted))

    def view_reads(self, ref: TableRef) -> list[tuple[str | None, str]] | None:
        """Every table and view that view `ref` reads, through views behind it, as (schema, name) with the default
        schema as None, followed the way run_sql's permission check follows it (catalog.view_reads); None when
        that cannot be followed (a definition that cannot be read or parsed, nesting too deep, an engine without
        such rules). A table reads nothing: []."""
        if ref.kind != "view":
            return []
        family = family_of(str(self.sa_engine.dialect.name))
        if family not in FOLLOWED_FAMILIES:
            return None
        written = TableName(name=ref.name, schema=ref.schema, quoted=True, schema_quoted=ref.schema is not None)
        try:
            with self._session("follow the view", ref) as conn:
                resolved = resolve(conn, family, written)
                conn.rollback()
        except (SourceError, NameRefused):
            return None
        if resolved.unverifiable or resolved.view_reads is None:
            return None
        return list(dict.fromkeys(resolved.view_reads))

    @property
    def sqlglot_dialect(self) -> str | None:
        return SQLGLOT_DIALECTS.get(family_of(str(self.sa_engine.dialect.name)))

    def view_definition(self, ref: TableRef) -> exp.Query | None:
        """The parsed query behind view `ref`, or None (a table, an engine whose definitions are not read, or a
        definition that cannot be read or parsed)."""
        family = family_of(str(self.sa_engine.dialect.name))
        dialect = SQLGLOT_DIALECTS.get(family)
        if ref.kind != "view" or dialect is None:
            return None
        try:
            with self._session("read the definition of", ref) as conn:
                schema = ref.schema or str(conn.execute(text(_DEFAULT_SCHEMA[family])).scalar_one())
                definition = view_definition(conn, family, schema, ref.name, dialect)
                conn.rollback()
        except SourceError:
            return None
        if definition is not None and ref.schema is None:
            # MariaDB names the view's own database on every table it reads; the catalog names them without it.
            for table in definition.find_all(exp.Table):
                if table.args.get("db") is not None and table.db == schema:
                    table.set("db", None)
        return definition

    def close(self) -> None:
        self.sa_engine.dispose()

    # --- shared machinery ---------------------------------------------------------------------------------------

    @contextmanager
    def _session(self, action: str, ref: TableRef | None) -> Iterator[Connection]:
        """A pooled connection whose driver errors become SourceError (SourceTimeout past the timeout)."""
        what = f"{action} {ref.qualified}" if ref else f"{action} the source"
        try:
            with self.sa_engine.connect() as conn:
                yield conn
        except SQLAlchemyError as exc:
            if self._is_timeout(exc):
                limit = f"{self.statement_timeout_s:g} s"
                raise SourceTimeout(
                    f"cannot {what}: the statement ran past the {limit} timeout and was cancelled"
                ) from exc
            raise SourceError(f"cannot {what}: {driver_message(exc, self._secret)}") from exc

    def _is_timeout(self, exc: BaseException) -> bool:
        """Whether `exc`, or the driver error it wraps, is the engine cancelling a statement for its timeout."""
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, DBAPIError) and cause.orig is not None and self._timeout_error(cause.orig):
                return True
            cause = cause.__cause__
        return False

    def _columns(self, ref: TableRef, names: Sequence[str]) -> list[ColumnInfo]:
        info = self.describe(ref)
        if info.view_definition_error:
            raise SourceError(f"cannot read view {ref.qualified}: {info.view_definition_error}")
        by_name = {c.name: c for c in info.columns}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise SourceError(f"{ref.qualified} has no column {', '.join(map(repr, missing))}")
        return [by_name[n] for n in names]

    def _select_list(self, from_: FromClause, picked: Sequence[ColumnInfo]) -> list[ColumnElement[Any]]:
        return [self._cut(from_.c[c.name], c) for c in picked]

    def _first_rows(self, conn: Connection, ref: TableRef, picked: Sequence[ColumnInfo], count: int) -> Rows:
        from_ = source(ref, [c.name for c in picked])
        return fetch(conn, select(*self._select_list(from_, picked)).select_from(from_).limit(count))

    # --- hooks for engines --------------------------------------------------------------------------------------

    def _create_engine(self, url: URL) -> Engine:
        try:
            return create_engine(url, pool_pre_ping=True)
        except (NoSuchModuleError, ImportError) as exc:
            raise SourceError(f"no SQLAlchemy driver for URL scheme {url.drivername!r}") from exc

    def _install_session_settings(self, engine: Engine) -> None:
        """Per-connection settings. Generic engines have no portable read-only switch; pyodbc has a query timeout."""
        seconds = max(1, math.ceil(self.statement_timeout_s))

        def on_connect(dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry) -> None:
            if type(dbapi_conn).__module__ == "pyodbc":
                dbapi_conn.timeout = seconds

        event.listen(engine, "connect", on_connect)

    def _timeout_error(self, orig: BaseException) -> bool:
        # ODBC's "timeout expired" SQLSTATEs, which pyodbc puts at the start of its message.
        return str(orig).lstrip("('\"").startswith(("HYT00", "HYT01"))

    def _read_version(self, conn: Connection) -> str:
        info = self.sa_engine.dialect.server_version_info
        return ".".join(str(part) for part in info) if info else "unknown"

    def _engine_name(self) -> str:
        return str(self.sa_engine.dialect.name)

    def _schemas(self, inspector: Any) -> list[str | None]:
        return user_schemas(inspector)

    def _readable(self, conn: Connection, refs: list[TableRef]) -> list[TableRef]:
        """Drop what the account could list but not read, where the engine shows privileges cheaply."""
        return refs

    def _statistics(self, conn: Connection, info: TableInfo) -> tuple[int | None, str | None]:
        """(row estimate, parent of a declared partition) from the engine's own bookkeeping; never a scan."""
        return None, None

    def _cut(self, col: ColumnElement[Any], info: ColumnInfo) -> ColumnElement[Any]:
        """The column as selected for a sample: long text and binary values cut in SQL where the engine can."""
        return col

    def _spread(
        self, conn: Connection, info: TableInfo, picked: Sequence[ColumnInfo], limit: int, rng: Random
    ) -> Sample | None:
        """A sample spread over a table too large to read whole, or None where the engine has no such method."""
        return None


def _lost_connection(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, DBAPIError) and cause.connection_invalidated:
            return True
        cause = cause.__cause__
    return False
