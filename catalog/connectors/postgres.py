"""PostgreSQL: read-only sessions, statement_timeout, pg_class statistics, declared partitions and TABLESAMPLE."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any

from sqlalchemy import TEXT, URL, Connection, Engine, cast, create_engine, event, func, literal_column, select, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql.elements import ColumnElement

from catalog.connectors.base import ColumnInfo, Sample, TableInfo, TableRef
from catalog.connectors.generic import GenericConnector
from catalog.connectors.sampling import BINARY_CUT, TEXT_CUT, Rows, const, fetch, seed_for, source, thin

CONNECT_TIMEOUT_S = 5
QUERY_CANCELED = "57014"
#: TABLESAMPLE asks for this many times the rows wanted, so sampling noise rarely leaves the sample short.
OVERSAMPLE = 2.0
#: Rows per 8 kB page assumed for a table never analysed: low, so that the sample errs on the large side.
ROWS_PER_PAGE_GUESS = 40

_RELATION = """
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = :schema AND c.relname = :name
"""
_STATISTICS = """
    SELECT c.relkind, c.reltuples, c.relpages, parent.relname, parent_ns.nspname
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_inherits i ON c.relispartition AND i.inhrelid = c.oid
    LEFT JOIN pg_class parent ON parent.oid = i.inhparent
    LEFT JOIN pg_namespace parent_ns ON parent_ns.oid = parent.relnamespace
    WHERE n.nspname = :schema AND c.relname = :name
"""
_LEAF_ESTIMATE = """
    SELECT sum(leaf.reltuples) FILTER (WHERE leaf.reltuples >= 0), count(*) FILTER (WHERE leaf.reltuples >= 0)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    CROSS JOIN LATERAL pg_partition_tree(c.oid) tree JOIN pg_class leaf ON leaf.oid = tree.relid
    WHERE n.nspname = :schema AND c.relname = :name AND tree.isleaf
"""
_PAGES = f"""
    SELECT COALESCE((SELECT sum(pg_relation_size(tree.relid)) FROM pg_partition_tree(c.oid) tree),
                    pg_relation_size(c.oid)) / current_setting('block_size')::int
    {_RELATION}
"""
_READABLE = """
    SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
      AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')
"""


class PostgresConnector(GenericConnector):
    def _create_engine(self, url: URL) -> Engine:
        return create_engine(url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}, pool_pre_ping=True)

    def _install_session_settings(self, engine: Engine) -> None:
        milliseconds = str(max(1, round(self.statement_timeout_s * 1000)))

        def on_connect(dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry) -> None:
            # Set in a session rather than as startup options, which connection poolers such as PgBouncer refuse.
            cursor = dbapi_conn.cursor()
            try:
                cursor.execute(
                    "SELECT set_config('default_transaction_read_only', 'on', false),"
                    " set_config('statement_timeout', %s, false)",
                    (milliseconds,),
                )
            finally:
                cursor.close()
            dbapi_conn.commit()  # a SET made in a transaction that is rolled back would be undone

        event.listen(engine, "connect", on_connect)

    def _timeout_error(self, orig: BaseException) -> bool:
        return QUERY_CANCELED in (getattr(orig, "sqlstate", None), getattr(orig, "pgcode", None))

    def _read_version(self, conn: Connection) -> str:
        return str(conn.execute(text("SHOW server_version")).scalar_one()).split(" ")[0]

    def _where(self, ref: TableRef) -> dict[str, Any]:
        return {"schema": ref.schema or self.sa_engine.dialect.default_schema_name, "name": ref.name}

    def _readable(self, conn: Connection, refs: list[TableRef]) -> list[TableRef]:
        default = self.sa_engine.dialect.default_schema_name
        readable = {(str(row[0]), str(row[1])) for row in conn.execute(text(_READABLE))}
        return [r for r in refs if (r.schema or default, r.name) in readable]

    def _statistics(self, conn: Connection, info: TableInfo) -> tuple[int | None, str | None]:
        """reltuples (-1 until the first ANALYZE or VACUUM) and, for a declared partition, its parent."""
        ref = info.ref
        row = conn.execute(text(_STATISTICS), self._where(ref)).first()
        if row is None:
            return None, None
        relkind, reltuples, relpages, parent, parent_schema = row
        if parent is None:
            parent_of = None
        elif parent_schema == (ref.schema or self.sa_engine.dialect.default_schema_name):
            parent_of = str(parent)
        else:
            parent_of = f"{parent_schema}.{parent}"
        if relkind == "p":  # a partitioned table keeps no rows itself: add up its analysed leaves
            total, known = conn.execute(text(_LEAF_ESTIMATE), self._where(ref)).one()
            return (round(total) if known else None), parent_of
        # Before PostgreSQL 14, 0 meant both "empty" and "never analysed"; -1 marks the latter since.
        major = (self.sa_engine.dialect.server_version_info or (0,))[0]
        ambiguous_zero = isinstance(major, int) and major < 14 and reltuples == 0 and relpages == 0
        never_analysed = reltuples < 0 or ambiguous_zero
        return (None if never_analysed else round(reltuples)), parent_of

    def _cut(self, col: ColumnElement[Any], info: ColumnInfo) -> ColumnElement[Any]:
        if info.family == "text" and (info.max_length is None or info.max_length > TEXT_CUT):
            return func.substr(cast(col, TEXT), const(1), const(TEXT_CUT))
        if info.family == "binary":
            return func.substr(col, const(1), const(BINARY_CUT))
        return col

    def _spread(
        self, conn: Connection, info: TableInfo, picked: Sequence[ColumnInfo], limit: int, rng: Random
    ) -> Sample | None:
        """TABLESAMPLE SYSTEM (whole pages) sized from the estimate, BERNOULLI (single rows, but reading every page)
        when SYSTEM comes back well short, and None (plain LIMIT) when both do, e.g. after a mass delete."""
        estimate = info.row_estimate
        if estimate is None:
            pages = conn.execute(text(_PAGES), self._where(info.ref)).scalar()
            estimate = int(pages or 0) * ROWS_PER_PAGE_GUESS
        if estimate <= 0:
            return None
        percent = min(100.0, max(0.0001, 100.0 * OVERSAMPLE * limit / estimate))
        rows = self._tablesample(conn, info, picked, "system", percent, limit)
        method = "tablesample"
        if len(rows) < limit // 2 and percent < 100:
            more = self._tablesample(conn, info, picked, "bernoulli", percent, limit)
            if len(more) > len(rows):
                rows, method = more, "tablesample-bernoulli"
        complete = percent >= 100 and len(rows) <= limit
        if len(rows) < limit // 2 and not complete:
            return None
        names = tuple(c.name for c in picked)
        return Sample(columns=names, rows=thin(rows, limit, rng), complete=complete, method=method)

    def _tablesample(
        self, conn: Connection, info: TableInfo, picked: Sequence[ColumnInfo], kind: str, percent: float, limit: int
    ) -> Rows:
        # REPEATABLE with a seed from the table name: the same pages and rows while the table is unchanged.
        sampler = func.bernoulli if kind == "bernoulli" else func.system
        sampled = source(info.ref, [c.name for c in picked]).tablesample(
            sampler(literal_column(f"{percent:.6f}")), seed=const(seed_for(info.ref))
        )
        cap = int(limit * OVERSAMPLE * 2) + 1  # bounds the transfer if the estimate was far too low
        return fetch(conn, select(*self._select_list(sampled, picked)).select_from(sampled).limit(cap))
