"""Table permissions for SQL (SPEC §6 and §7): every table a query reads, directly or through views, must be allowed.

Names are resolved with the engine's own rules before asking `Principal.may_see`: PostgreSQL folds unquoted names to
lower case and finds unqualified ones on the search_path (`to_regclass`), MariaDB/MySQL's schema is the source's
database, SQLite compares names without regard to case in its `main` schema. The default schema is passed as None,
as the catalog stores it, so SQL checks and search agree. A view is followed through what it reads (PostgreSQL's
dependency catalog, the definitions in information_schema.VIEWS or sqlite_master), recursively, and refused as a
whole when anything behind it is hidden, without naming what.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlglot.errors import SqlglotError

from catalog.connectors.errors import driver_message
from core.permissions import Principal
from workers.sql.engines import family_of
from workers.sql.guard import SYSTEM_SCHEMAS, TableName, parse_definition, tables_read

#: Views behind views are followed this deep; deeper nesting is refused rather than left unchecked.
MAX_VIEW_DEPTH = 16

_PG_RELATION = """
    SELECT c.oid, n.nspname, c.relname, c.relkind, current_schema(), current_database()
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = to_regclass(:name)
"""
_PG_DEFAULTS = "SELECT current_schema(), current_database()"
# Everything a view reads, through views behind it: the relations its rewrite rule depends on, recursively.
_PG_VIEW_READS = """
    WITH RECURSIVE reads(oid, depth) AS (
        SELECT CAST(:oid AS oid), 0
        UNION
        SELECT d.refobjid, reads.depth + 1
        FROM reads
        JOIN pg_rewrite r ON r.ev_class = reads.oid
        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
            AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> reads.oid
        WHERE reads.depth < :depth
    )
    SELECT DISTINCT n.nspname, c.relname, c.relkind, max(reads.depth) OVER () >= :depth
    FROM reads JOIN pg_class c ON c.oid = reads.oid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE reads.depth > 0
"""
_MYSQL_VIEW = """
    SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = :name
"""
_SQLITE_OBJECT = "SELECT type, name, sql FROM main.sqlite_master WHERE name = :name COLLATE NOCASE"


class AccessDenied(Exception):
    """The principal may not read something the SQL reads; `str(exc)` is safe to show (names only what the user
    wrote)."""


class AccessRefused(Exception):
    """A name the SQL uses is outside what run_sql may read (another database, a system catalog)."""


@dataclass(frozen=True)
class _Resolved:
    written: TableName
    schema: str | None  # None: the source's default schema
    name: str
    view_reads: tuple[tuple[str | None, str], ...] | None  # what a view reads (schema, name); None for a table
    unverifiable: bool = False  # a view whose definition cannot be read or followed


def check_access(engine: Engine, principal: Principal, database: str, tables: Sequence[TableName]) -> None:
    """Raise AccessDenied or AccessRefused unless `principal` may read every table in `tables` and everything the
    views among them read, in source `database` (reached through `engine`)."""
    if principal.operator or not tables:
        return
    for table in tables:
        if not principal.may_see(database, table.name, table.schema):
            raise AccessDenied(f"no permission: you may not read table {table.written}")
    family = family_of(engine)
    try:
        with engine.connect() as conn:
            resolved = [_resolve(conn, family, table) for table in tables]
            conn.rollback()
    except SQLAlchemyError as exc:
        raise AccessRefused(f"cannot check the tables the query reads: {driver_message(exc)}") from exc
    for item in resolved:
        if not principal.may_see(database, item.name, item.schema):
            raise AccessDenied(f"no permission: you may not read table {item.written.written}")
        if item.unverifiable:
            raise AccessDenied(
                f"no permission: view {item.written.written} cannot be checked (its definition cannot be read)"
            )
        if item.view_reads is not None and not all(principal.may_see(database, n, s) for s, n in item.view_reads):
            raise AccessDenied(
                f"no permission: view {item.written.written} reads data you may not see; use the tables you may read"
            )


def _resolve(conn: Connection, family: str, table: TableName) -> _Resolved:
    if family == "postgresql":
        return _resolve_postgres(conn, table)
    if family == "mysql":
        return _resolve_mysql(conn, table)
    return _resolve_sqlite(conn, table)


# --- PostgreSQL ----------------------------------------------------------------------------------------------------


def _pg_ident(value: str, quoted: bool) -> str:
    folded = value if quoted else value.lower()
    return '"' + folded.replace('"', '""') + '"'


def _resolve_postgres(conn: Connection, table: TableName) -> _Resolved:
    default_schema, current_db = conn.execute(text(_PG_DEFAULTS)).one()
    if table.catalog is not None and table.catalog.lower() != str(current_db).lower():
        raise AccessRefused(f"refused: {table.written} is in another database; only this database can be queried")
    qualified = _pg_ident(table.name, table.quoted)
    if table.schema is not None:
        qualified = f"{_pg_ident(table.schema, table.schema_quoted)}.{qualified}"
    row = conn.execute(text(_PG_RELATION), {"name": qualified}).first()
    if row is None:  # no such relation: the engine will say so; the permission check uses the name as written
        schema = None if table.schema is None else (table.schema if table.schema_quoted else table.schema.lower())
        return _Resolved(table, None if schema == default_schema else schema, table.name, None)
    oid, nspname, relname, relkind = row[0], str(row[1]), str(row[2]), str(row[3])
    if nspname in SYSTEM_SCHEMAS or nspname.startswith("pg_"):
        raise AccessRefused(
            f"refused: system catalogs ({table.written}) cannot be queried; search the catalog with tools"
        )
    schema = None if nspname == default_schema else nspname
    if relkind not in ("v", "m"):
        return _Resolved(table, schema, relname, None)
    reads: list[tuple[str | None, str]] = []
    too_deep = False
    for dep_schema, dep_name, _kind, deep in conn.execute(text(_PG_VIEW_READS), {"oid": oid, "depth": MAX_VIEW_DEPTH}):
        too_deep = too_deep or bool(deep)
        if str(dep_schema) in SYSTEM_SCHEMAS or str(dep_schema).startswith("pg_"):
            continue
        reads.append((None if dep_schema == default_schema else str(dep_schema), str(dep_name)))
    return _Resolved(table, schema, relname, tuple(reads), unverifiable=too_deep)


# --- MariaDB / MySQL -----------------------------------------------------------------------------------------------


def _resolve_mysql(conn: Connection, table: TableName) -> _Resolved:
    current_db, lower_names = conn.execute(text("SELECT DATABASE(), @@lower_case_table_names")).one()
    if table.catalog is not None:
        raise AccessRefused(f"refused: {table.written} has too many name parts; write TABLE or DATABASE.TABLE")
    if table.schema is not None and not _same_mysql_name(table.schema, str(current_db), lower_names):
        raise AccessRefused(
            f"refused: {table.written} is in another database; write the table name without a database prefix"
        )
    return _follow_mysql(conn, table, table.name, str(current_db), lower_names, set(), 0)


def _same_mysql_name(a: str, b: str, lower_names: object) -> bool:
    return a == b or (str(lower_names) != "0" and a.lower() == b.lower())


def _follow_mysql(
    conn: Connection, written: TableName, name: str, current_db: str, lower_names: object, seen: set[str], depth: int
) -> _Resolved:
    found = [
        row
        for row in conn.execute(text(_MYSQL_VIEW), {"name": name})
        if _same_mysql_name(str(row[0]), name, lower_names)
    ]
    if not found:
        return _Resolved(written, None, name, None)
    view_name, definition = str(found[0][0]), found[0][1]
    if not definition or depth >= MAX_VIEW_DEPTH:
        return _Resolved(written, None, view_name, (), unverifiable=True)
    try:
        inner = tables_read(parse_definition(str(definition), "mysql"), "mysql")
    except (SqlglotError, RecursionError):
        return _Resolved(written, None, view_name, (), unverifiable=True)
    reads: list[tuple[str | None, str]] = []
    seen = seen | {view_name}
    for table in inner:
        here = table.schema is None or _same_mysql_name(table.schema, current_db, lower_names)
        schema = None if here else table.schema
        reads.append((schema, table.name))
        if schema is None and table.name not in seen:
            behind = _follow_mysql(conn, table, table.name, current_db, lower_names, seen, depth + 1)
            if behind.unverifiable:
                return _Resolved(written, None, view_name, (), unverifiable=True)
            reads.extend(behind.view_reads or ())
    return _Resolved(written, None, view_name, tuple(reads))


# --- SQLite --------------------------------------------------------------------------------------------------------


def _resolve_sqlite(conn: Connection, table: TableName) -> _Resolved:
    if table.catalog is not None or (table.schema is not None and table.schema.lower() != "main"):
        raise AccessRefused(f"refused: {table.written} is not in this database; write the table name alone")
    return _follow_sqlite(conn, table, table.name, set(), 0)


def _follow_sqlite(conn: Connection, written: TableName, name: str, seen: set[str], depth: int) -> _Resolved:
    row = conn.execute(text(_SQLITE_OBJECT), {"name": name}).first()
    if row is None:
        return _Resolved(written, None, name, None)
    kind, stored, definition = str(row[0]), str(row[1]), row[2]
    if kind != "view":
        return _Resolved(written, None, stored, None)
    if not definition or depth >= MAX_VIEW_DEPTH:
        return _Resolved(written, None, stored, (), unverifiable=True)
    try:
        inner = tables_read(parse_definition(str(definition), "sqlite"), "sqlite")
    except (SqlglotError, RecursionError):
        return _Resolved(written, None, stored, (), unverifiable=True)
    reads: list[tuple[str | None, str]] = []
    seen = seen | {stored.lower()}
    for table in inner:
        if table.schema is not None and table.schema.lower() != "main":
            return _Resolved(written, None, stored, (), unverifiable=True)
        reads.append((None, table.name))
        if table.name.lower() not in seen:
            behind = _follow_sqlite(conn, table, table.name, seen, depth + 1)
            if behind.unverifiable:
                return _Resolved(written, None, stored, (), unverifiable=True)
            reads.extend(behind.view_reads or ())
    return _Resolved(written, None, stored, tuple(reads))
