"""The query behind a view, as the engine keeps it: PostgreSQL `pg_get_viewdef`, MariaDB/MySQL
information_schema.VIEWS, SQLite sqlite_master. Used by analysis (which columns a view's columns are computed from,
`catalog.view_lineage`) and by the row-filter rewrite, which reads a view over filtered tables through its
definition. A materialized view, or a definition that cannot be read or parsed, gives None.
"""

from __future__ import annotations

from sqlalchemy import Connection, text
from sqlglot import exp
from sqlglot.errors import SqlglotError

from catalog.sql_tables import parse_definition

_PG_VIEW = """
    SELECT pg_get_viewdef(c.oid, true) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = :schema AND c.relname = :name AND c.relkind = 'v'
"""
_MYSQL_VIEW = "SELECT VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = :schema AND TABLE_NAME = :name"
_SQLITE_VIEW = "SELECT sql FROM main.sqlite_master WHERE type = 'view' AND name = :name"
_QUERIES = {"postgresql": _PG_VIEW, "mysql": _MYSQL_VIEW, "sqlite": _SQLITE_VIEW}


def view_definition(conn: Connection, family: str, schema: str, name: str, dialect: str) -> exp.Query | None:
    """The parsed query behind view `schema.name` (`schema` as the engine names it), or None when it cannot be
    read or parsed (or is materialized)."""
    query = _QUERIES.get(family)
    if query is None:
        return None
    found = conn.execute(text(query), {"schema": schema, "name": name}).scalar()
    if not found:
        return None
    try:
        definition = parse_definition(str(found), dialect)
    except (SqlglotError, RecursionError, ValueError):
        return None
    if not isinstance(definition, exp.Query):
        return None
    if family == "mysql":
        # information_schema writes columns as `db`.`table`.`column`; the tables become derived tables named
        # `table`, so the columns are named by table alone.
        for column in definition.find_all(exp.Column):
            if column.args.get("db") is not None:
                column.set("db", None)
                column.set("catalog", None)
    return definition
