"""What a view reads, followed through views behind it, with each engine's own name rules (SPEC §6).

PostgreSQL folds unquoted names to lower case and finds unqualified ones on the search_path (`to_regclass`) and
lists a view's dependencies in its catalog (recursively); MariaDB/MySQL's schema is the source's database and a
view's definition is read from information_schema.VIEWS; SQLite compares names without regard to case in its
`main` schema and keeps view definitions in sqlite_master. The default schema is given as None, as the catalog
stores it. Used by run_sql's permission check (workers.sql.access) and by analysis, which records what each view
reads so that its card is shown only to users who may read everything behind it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, text
from sqlglot.errors import SqlglotError

from catalog.sql_tables import SYSTEM_SCHEMAS, TableName, TableNameError, parse_definition, tables_read

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


class NameRefused(Exception):
    """A name is outside what may be read at all (another database, a system catalog); `str(exc)` is safe to show."""


@dataclass(frozen=True)
class Resolved:
    """A name resolved on the source: the relation it is, and for a view everything behind it."""

    written: TableName
    schema: str | None  # None: the source's default schema
    name: str
    view_reads: tuple[tuple[str | None, str], ...] | None  # what a view reads (schema, name); None for a table
    unverifiable: bool = False  # a view whose definition cannot be read or followed


#: Engine families whose views are followed; a view of another engine cannot be checked.
FOLLOWED_FAMILIES = frozenset({"sqlite", "mysql", "postgresql"})


def family_of(dialect_name: str) -> str:
    """ "sqlite", "mysql" (MariaDB included) or "postgresql" for a SQLAlchemy dialect name; others as they are."""
    return "mysql" if dialect_name in ("mysql", "mariadb") else dialect_name


def resolve(conn: Connection, family: str, table: TableName) -> Resolved:
    """Resolve `table` on the source behind `conn` (engine family `family`); raises NameRefused or SQLAlchemyError."""
    if family == "postgresql":
        return _resolve_postgres(conn, table)
    if family == "mysql":
        return _resolve_mysql(conn, table)
    return _resolve_sqlite(conn, table)


# --- PostgreSQL ----------------------------------------------------------------------------------------------------


def _pg_ident(value: str, quoted: bool) -> str:
    folded = value if quoted else value.lower()
    return '"' + folded.replace('"', '""') + '"'


def _resolve_postgres(conn: Connection, table: TableName) -> Resolved:
    default_schema, current_db = conn.execute(text(_PG_DEFAULTS)).one()
    if table.catalog is not None and table.catalog.lower() != str(current_db).lower():
        raise NameRefused(f"refused: {table.written} is in another database; only this database can be queried")
    qualified = _pg_ident(table.name, table.quoted)
    if table.schema is not None:
        qualified = f"{_pg_ident(table.schema, table.schema_quoted)}.{qualified}"
    row = conn.execute(text(_PG_RELATION), {"name": qualified}).first()
    if row is None:  # no such relation: the engine will say so; the permission check uses the name as written
        schema = None if table.schema is None else (table.schema if table.schema_quoted else table.schema.lower())
        return Resolved(table, None if schema == default_schema else schema, table.name, None)
    oid, nspname, relname, relkind = row[0], str(row[1]), str(row[2]), str(row[3])
    if nspname in SYSTEM_SCHEMAS or nspname.startswith("pg_"):
        raise NameRefused(
            f"refused: system catalogs ({table.written}) cannot be queried; search the catalog with tools"
        )
    schema = None if nspname == default_schema else nspname
    if relkind not in ("v", "m"):
        return Resolved(table, schema, relname, None)
    reads: list[tuple[str | None, str]] = []
    too_deep = False
    for dep_schema, dep_name, _kind, deep in conn.execute(text(_PG_VIEW_READS), {"oid": oid, "depth": MAX_VIEW_DEPTH}):
        too_deep = too_deep or bool(deep)
        if str(dep_schema) in SYSTEM_SCHEMAS or str(dep_schema).startswith("pg_"):
            continue
        reads.append((None if dep_schema == default_schema else str(dep_schema), str(dep_name)))
    return Resolved(table, schema, relname, tuple(reads), unverifiable=too_deep)


# --- MariaDB / MySQL -----------------------------------------------------------------------------------------------


def _resolve_mysql(conn: Connection, table: TableName) -> Resolved:
    current_db, lower_names = conn.execute(text("SELECT DATABASE(), @@lower_case_table_names")).one()
    if table.catalog is not None:
        raise NameRefused(f"refused: {table.written} has too many name parts; write TABLE or DATABASE.TABLE")
    if table.schema is not None and not _same_mysql_name(table.schema, str(current_db), lower_names):
        raise NameRefused(
            f"refused: {table.written} is in another database; write the table name without a database prefix"
        )
    return _follow_mysql(conn, table, table.name, str(current_db), lower_names, set(), 0)


def _same_mysql_name(a: str, b: str, lower_names: object) -> bool:
    return a == b or (str(lower_names) != "0" and a.lower() == b.lower())


def _follow_mysql(
    conn: Connection, written: TableName, name: str, current_db: str, lower_names: object, seen: set[str], depth: int
) -> Resolved:
    found = [
        row
        for row in conn.execute(text(_MYSQL_VIEW), {"name": name})
        if _same_mysql_name(str(row[0]), name, lower_names)
    ]
    if not found:
        return Resolved(written, None, name, None)
    view_name, definition = str(found[0][0]), found[0][1]
    if not definition or depth >= MAX_VIEW_DEPTH:
        return Resolved(written, None, view_name, (), unverifiable=True)
    try:
        inner = tables_read(parse_definition(str(definition), "mysql"), "mysql")
    except (SqlglotError, TableNameError, RecursionError):
        return Resolved(written, None, view_name, (), unverifiable=True)
    reads: list[tuple[str | None, str]] = []
    seen = seen | {view_name}
    for table in inner:
        here = table.schema is None or _same_mysql_name(table.schema, current_db, lower_names)
        schema = None if here else table.schema
        reads.append((schema, table.name))
        if schema is None and table.name not in seen:
            behind = _follow_mysql(conn, table, table.name, current_db, lower_names, seen, depth + 1)
            if behind.unverifiable:
                return Resolved(written, None, view_name, (), unverifiable=True)
            reads.extend(behind.view_reads or ())
    return Resolved(written, None, view_name, tuple(reads))


# --- SQLite --------------------------------------------------------------------------------------------------------


def _resolve_sqlite(conn: Connection, table: TableName) -> Resolved:
    if table.catalog is not None or (table.schema is not None and table.schema.lower() != "main"):
        raise NameRefused(f"refused: {table.written} is not in this database; write the table name alone")
    return _follow_sqlite(conn, table, table.name, set(), 0)


def _follow_sqlite(conn: Connection, written: TableName, name: str, seen: set[str], depth: int) -> Resolved:
    row = conn.execute(text(_SQLITE_OBJECT), {"name": name}).first()
    if row is None:
        return Resolved(written, None, name, None)
    kind, stored, definition = str(row[0]), str(row[1]), row[2]
    if kind != "view":
        return Resolved(written, None, stored, None)
    if not definition or depth >= MAX_VIEW_DEPTH:
        return Resolved(written, None, stored, (), unverifiable=True)
    try:
        inner = tables_read(parse_definition(str(definition), "sqlite"), "sqlite")
    except (SqlglotError, TableNameError, RecursionError):
        return Resolved(written, None, stored, (), unverifiable=True)
    reads: list[tuple[str | None, str]] = []
    seen = seen | {stored.lower()}
    for table in inner:
        if table.schema is not None and table.schema.lower() != "main":
            return Resolved(written, None, stored, (), unverifiable=True)
        reads.append((None, table.name))
        if table.name.lower() not in seen:
            behind = _follow_sqlite(conn, table, table.name, seen, depth + 1)
            if behind.unverifiable:
                return Resolved(written, None, stored, (), unverifiable=True)
            reads.extend(behind.view_reads or ())
    return Resolved(written, None, stored, tuple(reads))
