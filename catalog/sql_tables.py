"""Which tables a SQL query reads, by name as written, with CTE names resolved out scope by scope (sqlglot).

Shared by the SQL guard (what run_sql's statement reads) and by view following (what a view's definition reads,
for run_sql's permission check and for the catalog's cards of views), so both read SQL the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

# System catalogs: reading them would list tables the user may not see. Unqualified PostgreSQL names that resolve to
# pg_catalog are caught when names are resolved against the source (catalog.view_reads).
SYSTEM_SCHEMAS = frozenset({"information_schema", "pg_catalog", "pg_toast", "mysql", "performance_schema", "sys"})


class TableNameError(ValueError):
    """A table reference no engine accepts (more than three name parts); `str(exc)` says which."""


@dataclass(frozen=True)
class TableName:
    """A table (or view) a query reads, as written: parts unquoted, with whether each was quoted."""

    name: str
    schema: str | None = None
    catalog: str | None = None
    quoted: bool = False
    schema_quoted: bool = False

    @property
    def written(self) -> str:
        return ".".join(p for p in (self.catalog, self.schema, self.name) if p)


def parse_definition(sql: str, dialect: str) -> exp.Expr:
    """A view definition (`CREATE VIEW ... AS query` or the bare query) parsed without the function allowlist;
    raises SqlglotError when it does not parse."""
    statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    if len(statements) != 1:
        raise ParseError("a view definition must be one statement")
    statement = statements[0]
    if isinstance(statement, exp.Create) and isinstance(statement.expression, exp.Expr):
        return statement.expression
    return statement


def tables_read(statement: exp.Expr, dialect: str) -> list[TableName]:
    """Real tables `statement` reads: table references that no CTE in scope answers, each listed once.

    A CTE hides a table of the same name only inside its scope: the rest of its WITH clause after it (and its own
    body when the WITH is RECURSIVE) and the query the WITH belongs to, including that query's subqueries. Where the
    engines differ, a reference is taken for a CTE only when every engine would agree, so doubt means "real table"
    and the permission check runs. Raises TableNameError for a name of more than three parts.
    """
    found: dict[TableName, None] = {}
    _collect(statement, frozenset(), dialect, found, [])
    return list(found)


def table_nodes(statement: exp.Expr, dialect: str) -> list[exp.Table]:
    """The table references of `statement` that `tables_read` takes for real tables (not CTEs), in order."""
    nodes: list[exp.Table] = []
    _collect(statement, frozenset(), dialect, {}, nodes)
    return nodes


def _cte_key(identifier: exp.Identifier | str, quoted: bool, dialect: str) -> str:
    """How the engine compares a CTE name with a table reference; MariaDB/MySQL exactly (its case rules depend on the
    server), PostgreSQL folding unquoted names to lower case, SQLite without regard to case."""
    name = identifier if isinstance(identifier, str) else str(identifier.this)
    if dialect == "postgres":
        return name if quoted else name.lower()
    if dialect == "sqlite":
        return name.lower()
    return name


def _with_clause(node: exp.Expr) -> exp.With | None:
    found = node.args.get("with_") or node.args.get("with")
    return found if isinstance(found, exp.With) else None


def _collect(
    node: exp.Expr, visible: frozenset[str], dialect: str, found: dict[TableName, None], nodes: list[exp.Table]
) -> None:
    with_ = _with_clause(node)
    if with_ is not None:
        scope = set(visible)
        for cte in with_.expressions:
            alias = cte.args.get("alias")
            identifier = alias.this if isinstance(alias, exp.TableAlias) else None
            key = (
                _cte_key(identifier, bool(identifier.quoted), dialect)
                if isinstance(identifier, exp.Identifier)
                else None
            )
            own = frozenset(scope | {key}) if with_.args.get("recursive") and key is not None else frozenset(scope)
            if isinstance(cte.this, exp.Expr):
                _collect(cte.this, own, dialect, found, nodes)
            if key is not None:
                scope.add(key)
        inner = frozenset(scope)
        for child in node.iter_expressions():
            if child is not with_:
                _collect(child, inner, dialect, found, nodes)
        return
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
        name = _table_name(node)
        if not (name.schema is None and name.catalog is None and _cte_key(name.name, name.quoted, dialect) in visible):
            found.setdefault(name, None)
            nodes.append(node)
        for child in node.iter_expressions():
            if child.arg_key not in ("this", "db", "catalog"):
                _collect(child, visible, dialect, found, nodes)
        return
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Dot):
        raise TableNameError(f"table names have at most three parts: {node.sql(dialect=dialect)}")
    for child in node.iter_expressions():
        _collect(child, visible, dialect, found, nodes)


def table_name(node: exp.Table) -> TableName:
    """The name of a table reference, as written."""
    return _table_name(node)


def _table_name(node: exp.Table) -> TableName:
    def part(key: str) -> tuple[str | None, bool]:
        value = node.args.get(key)
        if isinstance(value, exp.Identifier):
            return str(value.this), bool(value.quoted)
        if isinstance(value, exp.Expr):
            return value.name, False
        return None, False

    name, quoted = part("this")
    schema, schema_quoted = part("db")
    catalog, _ = part("catalog")
    return TableName(name=name or "", schema=schema, catalog=catalog, quoted=quoted, schema_quoted=schema_quoted)
