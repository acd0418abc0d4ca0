"""A SQLite schema's table pragmas (columns, foreign keys, indexes and their columns) read for every table at once.

SQLAlchemy's SQLite dialect runs a PRAGMA statement for each question about a table, and without a schema runs it
twice when the answer is empty (the main schema, then temp): describing one table took six to eight statements,
about 2.4 s of describing 3,000 tables. `SchemaPragmas` reads each pragma for every table of a schema in one
statement, through the pragma's table-valued function, the first time the dialect asks for it, and answers from
there. A name it did not see (a table made after the read, a view) and a pragma it could not read in bulk (an older
SQLite) go to the dialect's own statement, so the answers are the dialect's in every case.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

#: The dialect method `SchemaPragmas` answers for; SQLAlchemy 2.0 and 2.1 name it so.
DIALECT_LOOKUP = "_get_table_pragma"

#: Each pragma read in bulk: its rows for every table of a schema, keyed by the first column (the table's name, or
#: for `index_info` the index's). Views are left to the dialect: reading a view's columns compiles it, and a view
#: that no longer compiles would fail the whole statement.
_BULK = {
    pragma: f"SELECT m.name, p.* FROM {{schema}}.sqlite_master AS m JOIN pragma_{pragma}(m.name, ?) AS p "
    "WHERE m.type = 'table'"
    for pragma in ("table_xinfo", "table_info", "foreign_key_list", "index_list")
} | {
    "index_info": "SELECT l.name, i.* FROM {schema}.sqlite_master AS m JOIN pragma_index_list(m.name, ?1) AS l "
    "JOIN pragma_index_info(l.name, ?1) AS i WHERE m.type = 'table'"
}
_TABLES = "SELECT name FROM {schema}.sqlite_master WHERE type = 'table'"

Rows = dict[str, list[tuple[Any, ...]]]


class SchemaPragmas:
    """Per schema and pragma, `name → rows` as `PRAGMA schema.pragma(name)` gives them."""

    def __init__(self, lookup: Callable[..., Any]) -> None:
        self._lookup = lookup
        self._read: dict[tuple[str, str], Rows | None] = {}
        self._lock = threading.Lock()

    def __call__(self, connection: Connection, pragma: str, table_name: str, schema: str | None = None) -> Any:
        if pragma not in _BULK:
            return self._lookup(connection, pragma, table_name, schema=schema)
        first = self._rows(connection, schema or "main", pragma)
        if first is None or table_name not in first:
            return self._lookup(connection, pragma, table_name, schema=schema)
        if first[table_name] or schema is not None:
            return first[table_name]
        temp = self._rows(connection, "temp", pragma)  # the dialect looks in temp when main has nothing
        if temp is None:
            return self._lookup(connection, pragma, table_name, schema=schema)
        return temp.get(table_name, [])

    def _rows(self, connection: Connection, schema: str, pragma: str) -> Rows | None:
        key = (schema, pragma)
        if key not in self._read:
            found = _read(connection, schema, pragma)
            with self._lock:
                self._read[key] = found
        return self._read[key]


def _read(connection: Connection, schema: str, pragma: str) -> Rows | None:
    """Every table's rows of `pragma` in `schema`; None when SQLite could not read them so."""
    quoted = connection.dialect.identifier_preparer.quote_identifier(schema)
    try:
        found: Rows = {}
        if pragma != "index_info":  # a table without rows (no foreign key, no index) answers []
            found = {str(name): [] for (name,) in connection.exec_driver_sql(_TABLES.format(schema=quoted)).all()}
        for row in connection.exec_driver_sql(_BULK[pragma].format(schema=quoted), (schema,)).all():
            found.setdefault(str(row[0]), []).append(tuple(row[1:]))
        return found
    except DBAPIError:
        return None


def read_pragmas_once(engine: Engine) -> SchemaPragmas | None:
    """Give `engine`'s SQLite dialect one `SchemaPragmas`; None where the dialect has no such lookup (it reads as
    it always did)."""
    dialect = engine.dialect
    lookup = getattr(dialect, DIALECT_LOOKUP, None)
    if lookup is None:
        return None
    cached = SchemaPragmas(lookup)
    setattr(dialect, DIALECT_LOOKUP, cached)
    return cached
