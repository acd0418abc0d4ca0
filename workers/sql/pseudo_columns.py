"""Row identifiers that are not columns (SQLite `rowid`, PostgreSQL `ctid`, MariaDB `_rowid` ...) on a table that is
filtered or masked for the user (SPEC §6). Such a table is read through a subquery, which has no row identifier:
SQLite would read NULL for every row (`WHERE rowid > 0` matching nothing) and the server engines would report a
column that does not exist. The query is refused with a message that says why, unless the table has a real column
of that name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

PSEUDO_COLUMNS = {
    "sqlite": frozenset({"rowid", "oid", "_rowid_"}),
    "postgresql": frozenset({"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"}),
    "mysql": frozenset({"_rowid"}),
}


@dataclass(frozen=True)
class PolicedReference:
    """A table reference of the query that the rewrite replaces: the node, the name the query reads it by, its
    real columns and how it is shown in a message."""

    node: exp.Table
    alias: str
    columns: Sequence[str]
    shown: str


def pseudo_column_refusal(statement: exp.Expr, family: str, references: Sequence[PolicedReference]) -> str | None:
    """The refusal for the first row identifier `statement` reads from a policed reference, or None."""
    names = PSEUDO_COLUMNS.get(family, frozenset())
    if not names or not references:
        return None
    for column in statement.find_all(exp.Column):
        name = column.name
        if name.casefold() not in names:
            continue
        for reference in _candidates(column, references):
            if name.casefold() not in {c.casefold() for c in reference.columns}:
                return (
                    f"refused: {name} cannot be read from {reference.shown}, which is filtered or masked for you "
                    "(its rows are read through a subquery, which has no row identifier); use its key columns instead"
                )
    return None


def _candidates(column: exp.Column, references: Sequence[PolicedReference]) -> list[PolicedReference]:
    qualifier = column.table
    if qualifier:
        return [r for r in references if r.alias.casefold() == qualifier.casefold()]
    scope = column.find_ancestor(exp.Select)
    return [r for r in references if r.node.find_ancestor(exp.Select) is scope]
