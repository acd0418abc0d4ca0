"""What in a query reveals the database's catalog (SPEC §6 and §7): the guard refuses it unless the user's role grants
catalog reads for the source (`catalog: true` in a grant).

- System schemas and tables: information_schema, pg_catalog (and unqualified `pg_*` names), mysql,
  performance_schema, sys, SQLite's `sqlite_*` tables, its table-valued pragmas (`pragma_table_info`,
  `pragma_database_list`, ...) and `dbstat`.
- PostgreSQL object-identifier casts (`'name'::regclass`, `CAST(x AS regtype)`, any `reg*` type or `oid`), which
  answer whether a relation exists and what it is called, whatever the user may see.
- MariaDB/MySQL system variables (`@@datadir`, `@@version`, `@@global.secure_file_priv`, ...).
"""

from __future__ import annotations

from sqlglot import exp

#: Names of PostgreSQL's object-identifier types (casts to them look objects up in the catalog).
_PG_OBJECT_TYPES = ("reg", "oid")


def catalog_reason(statement: exp.Expr, dialect: str) -> str | None:
    """Why `statement` reads the catalog (for the model), or None when it does not, apart from the tables it names
    (`is_catalog_table` decides those)."""
    for node in statement.walk():
        if isinstance(node, exp.SessionParameter):
            return f"system variables ({node.sql(dialect=dialect)}) cannot be read"
        if isinstance(node, exp.Cast | exp.TryCast) and _object_identifier_type(node.args.get("to")):
            return f"casts to catalog types ({node.args['to'].sql(dialect=dialect)}) are not allowed"
    return None


def is_catalog_table(name: str, dialect: str) -> bool:
    """A table name that, unqualified, reads the catalog in `dialect`."""
    lowered = name.lower()
    if dialect == "postgres":
        return lowered.startswith("pg_")  # pg_catalog is searched first, before the search_path
    return dialect == "sqlite" and (lowered.startswith(("sqlite_", "pragma_")) or lowered == "dbstat")


def _object_identifier_type(to: object) -> bool:
    if isinstance(to, exp.ObjectIdentifier):
        return True
    if isinstance(to, exp.DataType):
        kind = to.args.get("kind")
        name = kind.name if isinstance(kind, exp.Expr) else str(kind or "")
        if to.this == exp.DataType.Type.ARRAY:
            return any(_object_identifier_type(e) for e in to.expressions)
        return name.lower().startswith(_PG_OBJECT_TYPES)
    return False
