"""The CREATE statements of a SQLite schema, read once for every table instead of once per question about a table.

SQLAlchemy's SQLite dialect reads a table's CREATE statement (for its key constraints' names and options) with a
lookup by name on `sqlite_master`, which has no index on names: every lookup scans the whole schema table, CREATE
text included. Describing one table does it twice, so a schema of 3,000 tables read that table 6,000 times (about
13 s of its analysis). `TableSql` reads each schema's statements in one pass the first time the schema is asked
for and answers the dialect's lookups from there; a name it did not see (a table made after the read) goes to the
dialect's own lookup, so the answers are the dialect's in every case.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

#: The dialect method `TableSql` answers for; SQLAlchemy 2.0 and 2.1 name it so.
DIALECT_LOOKUP = "_get_table_sql"


class TableSql:
    """Each schema's `name → CREATE statement` for tables and views, main schema first then temp, as the dialect
    reads them."""

    def __init__(self, lookup: Callable[..., Any]) -> None:
        self._lookup = lookup
        self._schemas: dict[str | None, dict[str, str | None]] = {}
        self._lock = threading.Lock()

    def __call__(self, connection: Connection, table_name: str, schema: str | None = None, **kw: Any) -> Any:
        statements = self._schemas.get(schema)
        if statements is None:
            statements = self._read(connection, schema)
            with self._lock:
                self._schemas[schema] = statements
        if table_name in statements:
            return statements[table_name]
        return self._lookup(connection, table_name, schema=schema, **kw)

    def _read(self, connection: Connection, schema: str | None) -> dict[str, str | None]:
        prefix = f"{connection.dialect.identifier_preparer.quote_identifier(schema)}." if schema else ""
        kinds = "type IN ('table', 'view')"
        try:  # the temp schema exists beside the main one only
            rows = connection.exec_driver_sql(
                f"SELECT name, sql FROM {prefix}sqlite_master WHERE {kinds} "
                f"UNION ALL SELECT name, sql FROM {prefix}sqlite_temp_master WHERE {kinds}"
            ).all()
        except DBAPIError:
            rows = connection.exec_driver_sql(f"SELECT name, sql FROM {prefix}sqlite_master WHERE {kinds}").all()
        found: dict[str, str | None] = {}
        for name, sql in rows:
            found.setdefault(str(name), sql)  # the first of a name, as the dialect's lookup takes it
        return found


def read_table_sql_once(engine: Engine) -> TableSql | None:
    """Give `engine`'s SQLite dialect one `TableSql`; None where the dialect has no such lookup (it reads as it
    always did)."""
    dialect = engine.dialect
    lookup = getattr(dialect, DIALECT_LOOKUP, None)
    if lookup is None:
        return None
    cached = TableSql(lookup)
    setattr(dialect, DIALECT_LOOKUP, cached)
    return cached
