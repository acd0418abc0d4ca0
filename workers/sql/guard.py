"""The SQL guard (SPEC §7, layer 2): parse in the source's dialect and let exactly one read-only query through.

A statement passes when it is one query (SELECT, a set operation, VALUES, WITH over queries), holds no data-modifying
statement anywhere (CTEs included), no `SELECT ... INTO`, no locking clause, no variable assignment, no executable or
optimizer-hint comment, reads no system catalog, and calls only allow-listed functions (`workers.sql.functions`).
It also lists the real tables the query reads, with CTE names resolved out scope by scope, for the permission check.

Refusals raise `SqlRefused` with a message for the model that says what to change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError

from catalog.sql_tables import SYSTEM_SCHEMAS, TableName, TableNameError, parse_definition, tables_read
from workers.sql.catalog_rules import catalog_reason, is_catalog_table
from workers.sql.functions import function_name, is_allowed

MAX_SQL_CHARS = 50_000
MAX_ERROR_CHARS = 240

#: sqlglot dialect per source engine.
DIALECTS = {"sqlite": "sqlite", "mariadb": "mysql", "mysql": "mysql", "postgresql": "postgres", "postgres": "postgres"}

# `/*! ... */` and MariaDB's `/*M! ... */` run their content on MySQL/MariaDB; `/*+ ... */` optimizer hints can
# change session settings (SET_VAR) there. sqlglot drops comments, so the raw text is checked.
_EXECUTABLE_COMMENT = re.compile(r"/\*\s*(?:M?!|\+)", re.IGNORECASE)
_FILE_OUTPUT = re.compile(r"\bINTO\s+(?:OUT|DUMP)FILE\b", re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

_QUERY_ROOTS = (exp.Select, exp.SetOperation, exp.Subquery, exp.Values)
_STATEMENT_NAMES = """
    Alter AlterColumn AlterIndex AlterRename AlterSession AlterSet Analyze Attach Cache Command Comment Commit
    ConnectTo Copy Create Declare Delete Describe Detach Disconnect Drop Execute ExecuteSql Export Grant Insert
    Install Kill LoadData Merge NextValueFor Pragma Refresh Returning Revoke Rollback Set SetItem Show Summarize
    SwapTable Transaction TruncateTable Uncache Undrop Update Use UserDefinedFunction
"""
_STATEMENTS: tuple[type[exp.Expr], ...] = tuple(
    cls
    for name in _STATEMENT_NAMES.split()
    if isinstance(cls := getattr(exp, name, None), type) and issubclass(cls, exp.Expr)
)


class SqlRefused(Exception):
    """The SQL may not run; `str(exc)` tells the model why, starting with "refused:"."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"refused: {reason}")


@dataclass(frozen=True)
class CheckedQuery:
    """A query the guard let through: the parsed statement and the real tables it reads, in first-seen order."""

    sql: str
    dialect: str
    statement: exp.Expr
    tables: tuple[TableName, ...]


def dialect_for(engine: str) -> str | None:
    """sqlglot's dialect for a source engine, None for an engine tablescout has no SQL rules for."""
    return DIALECTS.get(engine.lower())


def check_query(sql: str, dialect: str, *, catalog: bool = False) -> CheckedQuery:
    """Parse `sql` in `dialect` and return it when it is one read-only query; raise SqlRefused otherwise.
    `catalog`: the user's role grants catalog reads on this source (`workers.sql.catalog_rules`)."""
    if not sql.strip():
        raise SqlRefused("no SQL was given")
    if len(sql) > MAX_SQL_CHARS:
        raise SqlRefused(f"the SQL is longer than {MAX_SQL_CHARS} characters; write a shorter query")
    if _EXECUTABLE_COMMENT.search(sql):
        raise SqlRefused("executable comments and optimizer hints (/*! ... */, /*+ ... */) are not allowed")
    if _FILE_OUTPUT.search(sql):
        raise SqlRefused("writing files (INTO OUTFILE / INTO DUMPFILE) is not allowed")
    statement = _parse_one(sql, dialect)
    if not isinstance(statement, _QUERY_ROOTS):
        raise SqlRefused(f"only queries (SELECT ...) may run; this is {_kind(statement)}")
    for node in statement.walk():
        _check_node(node, dialect, catalog)
    try:
        tables = tables_read(statement, dialect)
    except TableNameError as exc:
        raise SqlRefused(str(exc)) from exc
    if catalog:
        return CheckedQuery(sql=sql, dialect=dialect, statement=statement, tables=tuple(tables))
    for table in tables:
        if is_system_table(table, dialect):
            raise SqlRefused(f"system catalogs ({table.written}) cannot be queried; search the catalog with tools")
    reason = catalog_reason(statement, dialect)
    if reason is not None:
        raise SqlRefused(f"{reason}; search the catalog with tools")
    return CheckedQuery(sql=sql, dialect=dialect, statement=statement, tables=tuple(tables))


def is_system_table(table: TableName, dialect: str) -> bool:
    if table.schema is not None and table.schema.lower() in SYSTEM_SCHEMAS:
        return True
    return is_catalog_table(table.name, dialect)


# --- internals -------------------------------------------------------------------------------------------------


def _parse_one(sql: str, dialect: str) -> exp.Expr:
    try:
        parsed = sqlglot.parse(sql, read=dialect)
    except (ParseError, TokenError) as exc:
        raise SqlRefused(f"the SQL does not parse as {_DIALECT_NAMES[dialect]}: {_parse_message(exc)}") from exc
    except (SqlglotError, RecursionError, ValueError) as exc:
        raise SqlRefused(f"the SQL does not parse as {_DIALECT_NAMES[dialect]}: {_shorten(str(exc))}") from exc
    statements = [s for s in parsed if s is not None]
    if not statements:
        raise SqlRefused("no SQL statement was given")
    if len(statements) > 1:
        raise SqlRefused("only one statement may run; send a single SELECT without ';' between statements")
    return statements[0]


_DIALECT_NAMES = {"sqlite": "SQLite", "mysql": "MariaDB/MySQL", "postgres": "PostgreSQL"}


def _parse_message(exc: ParseError | TokenError) -> str:
    if isinstance(exc, ParseError) and exc.errors:
        first = exc.errors[0]
        description = str(first.get("description") or "invalid SQL")
        line, col = first.get("line"), first.get("col")
        highlight = str(first.get("highlight") or "").strip()
        where = f" at line {line}, column {col}" if line is not None else ""
        near = f" near {highlight!r}" if highlight else ""
        return _shorten(f"{description}{where}{near}")
    return _shorten(str(exc))


def _shorten(message: str) -> str:
    flat = " ".join(_ANSI.sub("", message).split())
    return flat if len(flat) <= MAX_ERROR_CHARS else flat[: MAX_ERROR_CHARS - 1] + "…"


def _kind(node: exp.Expr) -> str:
    if isinstance(node, exp.Command):
        return f"a {str(node.this).upper()} command"
    return f"a {node.key.upper()} statement"


def _check_node(node: exp.Expr, dialect: str, catalog: bool) -> None:
    if isinstance(node, _STATEMENTS):
        raise SqlRefused(f"only queries may run; {_kind(node)} inside the query (e.g. in a WITH clause) is not allowed")
    if isinstance(node, exp.Into):
        raise SqlRefused("SELECT ... INTO is not allowed; return the rows instead")
    if isinstance(node, exp.Lock):
        raise SqlRefused("locking clauses (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE) are not allowed")
    if isinstance(node, exp.PropertyEQ):
        raise SqlRefused("assigning variables (:=) is not allowed")
    if isinstance(node, exp.Placeholder | exp.Parameter):
        raise SqlRefused(
            f"the SQL has a parameter or variable ({node.sql(dialect=dialect)}) and nothing is bound to it; "
            "write the values themselves into the statement"
        )
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
        raise SqlRefused(f"schema-qualified function calls ({node.sql(dialect=dialect)}) are not allowed")
    table_function = isinstance(node, exp.Anonymous) and isinstance(node.parent, exp.Table)
    if catalog and table_function and is_catalog_table(str(node.name), dialect):
        return  # a table-valued pragma, as a table (the role grants catalog reads)
    if isinstance(node, exp.Func) and not is_allowed(node, dialect):
        name = function_name(node).upper()
        raise SqlRefused(
            f"function {name} is not allowed; use ordinary aggregate, date, string and math functions "
            "(sleep, file, lock, network, sequence and admin functions are refused)"
        )


__all__ = [
    "SYSTEM_SCHEMAS",
    "CheckedQuery",
    "SqlRefused",
    "TableName",
    "check_query",
    "dialect_for",
    "is_system_table",
    "parse_definition",
    "tables_read",
]
