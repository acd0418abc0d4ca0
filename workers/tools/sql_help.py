"""What run_sql adds around a failed or fixable statement, so the next round has what it needs to get it right.

- `qualifiers`: the names the source goes by in tablescout that are not schemas of it (for `workers.sql.repair`).
- `earlier_failure`: the same statement already failed in this turn; it is not run again, and the model is told so
  (a small model otherwise resends a failing statement until the round limit).
- `error_hint`: after "no such column" or "no such table" (in SQLite's, MariaDB's or PostgreSQL's words), the
  columns of the tables the query reads, or the tables with names like the unknown one; only tables the user may
  see are named, and only the columns their card shows (a column hidden from them is not named).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from core.cards.card_view import card_for_principal
from core.store.models import Source, SourceTable
from core.store.repositories import catalog as catalog_repo
from workers.models.json_replies import REPEATED_SQL
from workers.sql.guard import dialect_for
from workers.tools.base import ToolContext, visible_tables

#: Columns listed per table in a hint; the card has the rest.
HINT_COLUMNS = 40
HINT_TABLES = 3

_UNREACHABLE = "error: cannot reach database"
_UNKNOWN_COLUMN = re.compile(
    r"no such column: (?P<a>[\w.]+)|Unknown column '(?P<b>[^']+)'|column \"?(?P<c>[\w.]+)\"? does not exist",
    re.IGNORECASE,
)
_UNKNOWN_TABLE = re.compile(
    r"no such table: (?P<a>[\w.]+)|Table '(?P<b>[^']+)' doesn't exist|relation \"(?P<c>[^\"]+)\" does not exist",
    re.IGNORECASE,
)


def _normal(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";").strip().lower()


def qualifiers(context: ToolContext, source: Source) -> list[str]:
    """The source's tablescout name and aliases, less any that is also a schema of the source."""
    schemas = {schema.lower() for schema in catalog_repo.schema_names(context.session, source.id)}
    return [name for name in [source.name, *source.aliases] if name.lower() not in schemas]


def earlier_failure(context: ToolContext, database: str, statements: Sequence[str]) -> str | None:
    """The error text for a statement in `statements` that already failed on `database` in this turn, or None."""
    wanted = {_normal(sql) for sql in statements}
    for record in reversed(context.sql_runs):
        if record.error is None or record.error.startswith(_UNREACHABLE):
            continue  # a database that could not be reached may answer the same statement now
        if record.database == database and _normal(record.sql) in wanted:
            return (
                f"{REPEATED_SQL} in this conversation ({record.error}). "
                "Do not send it again: change the statement (other table, columns or functions) or answer that "
                "you could not get the number."
            )
    return None


def _column_names(context: ToolContext, source: Source, table: SourceTable) -> list[str]:
    """The columns of `table` as the user's card shows them (a column hidden from them is not there)."""
    columns = card_for_principal(context.principal, source.name, dict(table.card or {})).get("columns", [])
    return [str(c["name"]) for c in columns if isinstance(c, dict) and "name" in c]


def unknown_column(error: str) -> str | None:
    """The column an engine's "no such column" error names, as written (perhaps qualified); None for other errors."""
    found = _UNKNOWN_COLUMN.search(error)
    return next(g for g in found.groups() if g) if found is not None else None


def error_hint(
    context: ToolContext, source: Source, names: Sequence[tuple[str | None, str]], sql: str, error: str
) -> str:
    """Lines to add to a run_sql error ("" when there is nothing useful to add)."""
    column = unknown_column(error)
    if column is not None:
        return _columns_hint(context, source, names, _aliases(sql, source), column)
    table = _UNKNOWN_TABLE.search(error)
    if table is not None:
        return _tables_hint(context, source, next(g for g in table.groups() if g))
    return ""


def _aliases(sql: str, source: Source) -> dict[str, str]:
    """Alias (or bare table name) -> table name, for the tables the statement reads; {} when it does not parse."""
    dialect = dialect_for(source.engine)
    try:
        statement = sqlglot.parse_one(sql, read=dialect) if dialect else None
    except (SqlglotError, RecursionError, ValueError):
        return {}
    if statement is None:
        return {}
    return {table.alias_or_name.upper(): table.name for table in statement.find_all(exp.Table)}


def _columns_hint(
    context: ToolContext,
    source: Source,
    names: Sequence[tuple[str | None, str]],
    aliases: dict[str, str],
    unknown: str,
) -> str:
    lines = []
    everything: list[str] = []
    owners: dict[str, list[str]] = {}
    for schema, name in names:
        row = catalog_repo.find_table(context.session, source.id, name, schema)
        if row is None or not row.visible:
            continue
        if not context.principal.may_see_table(source.name, row):
            continue
        columns = _column_names(context, source, row)
        everything += columns
        for column in columns:
            owners.setdefault(column.upper(), []).append(row.name)
        more = f", … ({len(columns) - HINT_COLUMNS} more)" if len(columns) > HINT_COLUMNS else ""
        lines.append(f"Columns of {row.name}: {', '.join(columns[:HINT_COLUMNS])}{more}.")
    qualifier, _, bare = unknown.rpartition(".")
    if bare.upper() in owners:
        written = aliases.get(qualifier.upper(), qualifier)
        where = f", not of {written}" + (f" ({qualifier})" if written != qualifier else "") if qualifier else ""
        lines.append(f"{bare} is a column of {', '.join(owners[bare.upper()])}{where}.")
        return "\n".join(lines)
    close = difflib.get_close_matches(bare.upper(), [c.upper() for c in everything], n=3, cutoff=0.5)
    if close:
        lines.append(f"Closest to {bare}: {', '.join(close)}.")
    return "\n".join(lines)


def _tables_hint(context: ToolContext, source: Source, unknown: str) -> str:
    bare = unknown.rsplit(".", 1)[-1]
    known = {t.name.upper(): t.name for t in visible_tables(context, source)}
    close = difflib.get_close_matches(bare.upper(), list(known), n=HINT_TABLES, cutoff=0.5)
    if not close:
        return f"{source.name} has no table {bare}; find tables with search_tables."
    return f"{source.name} has no table {bare}; tables with similar names: {', '.join(known[c] for c in close)}."
