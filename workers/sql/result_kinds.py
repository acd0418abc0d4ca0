"""What each column of a query's result holds (`core.answer.values.ValueKind`), from the cards of the columns it
reads, so every surface formats a cell the same way: an order id is never grouped, a count always is.

A projection that reads a column takes that column's kind from its card: a key or a coded column names things, an
integer column named like a year holds years, a DECIMAL with two places holds amounts, dates are dates. COUNT is a
count; SUM and AVG measure what they read; MIN and MAX keep what they read; a year extracted from a date is a year.
Anything else (an expression no card describes, SQL that does not parse) is left for the renderer to guess from
the column's name and values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from core.answer.values import ValueKind, kind_from_name

CardColumns = Mapping[str, Mapping[str, Any]]  # upper-cased column name → the card's entry for it
_AMOUNT_TYPE = re.compile(r"\b(decimal|numeric|number)\s*\(\s*\d+\s*,\s*2\s*\)|\bmoney\b", re.IGNORECASE)
_YEAR_FORMAT = re.compile(r"^%?[Yy]{1,4}$")


def card_kind(column: Mapping[str, Any]) -> ValueKind | None:
    """What a card's column entry says its values are."""
    name = str(column.get("name") or "")
    family = str(column.get("family") or "")
    if column.get("codes"):
        return ValueKind.CODE
    if column.get("key") in ("PK", "FK", "UQ"):
        return ValueKind.YEAR if kind_from_name(name) is ValueKind.YEAR else ValueKind.IDENTIFIER
    named = kind_from_name(name)
    if family in ("integer", "decimal", "text") and named is not None:
        return named
    if family in ("date", "datetime"):
        return ValueKind.DATE
    if family == "boolean":
        return ValueKind.BOOLEAN
    if family == "decimal" and _AMOUNT_TYPE.search(str(column.get("type") or "")):
        return ValueKind.AMOUNT
    if family in ("integer", "decimal", "float"):
        return ValueKind.NUMBER
    if family == "text":
        return ValueKind.TEXT
    return None


def result_kinds(
    sql: str, dialect: str | None, columns: Sequence[str], tables: Mapping[str, CardColumns]
) -> list[ValueKind | None]:
    """One kind (or None) per result column of `sql`, whose tables' card columns `tables` gives by upper-cased
    table name. The projections are matched to `columns` by position; a `*` by the result's column names."""
    try:
        tree = parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return [None] * len(columns)
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None:
        return [None] * len(columns)
    scope = _scope(select, tables)
    projections = list(select.expressions)
    if len(projections) != len(columns) or any(isinstance(p, exp.Star) for p in projections):
        return [_column_kind(scope, exp.column(c)) for c in columns]
    return [_kind(scope, p) for p in projections]


def _scope(select: exp.Select, tables: Mapping[str, CardColumns]) -> dict[str, CardColumns]:
    """The card columns of each table the query reads, by its alias and its name (upper case)."""
    scope: dict[str, CardColumns] = {}
    for table in select.find_all(exp.Table):
        columns = tables.get(table.name.upper())
        if columns is None:
            continue
        scope[table.name.upper()] = columns
        if table.alias:
            scope[table.alias.upper()] = columns
    return scope


def _column_kind(scope: Mapping[str, CardColumns], column: exp.Column) -> ValueKind | None:
    name = column.name.upper()
    if column.table:
        entry = scope.get(column.table.upper(), {}).get(name)
    else:
        entry = next((cols[name] for cols in scope.values() if name in cols), None)
    return card_kind(entry) if entry is not None else None


def _kind(scope: Mapping[str, CardColumns], node: exp.Expression) -> ValueKind | None:
    if isinstance(node, exp.Alias | exp.Paren | exp.Cast | exp.TryCast):
        return _kind(scope, node.this)
    if isinstance(node, exp.Column):
        return _column_kind(scope, node)
    if isinstance(node, exp.Count):
        return ValueKind.COUNT
    if isinstance(node, exp.Year) or (isinstance(node, exp.Extract) and node.name.upper() in ("YEAR", "YYYY")):
        return ValueKind.YEAR
    if isinstance(node, exp.TimeToStr):
        written = node.args.get("format")
        return ValueKind.YEAR if written is not None and _YEAR_FORMAT.match(written.name) else None
    if isinstance(node, exp.Sum | exp.Avg):
        inner = _kind(scope, node.this)
        return ValueKind.AMOUNT if inner is ValueKind.AMOUNT else ValueKind.NUMBER
    if isinstance(node, exp.Min | exp.Max):
        return _kind(scope, node.this)
    if isinstance(node, exp.Round):
        inner = _kind(scope, node.this)
        return inner if inner in (ValueKind.AMOUNT, ValueKind.NUMBER, ValueKind.COUNT) else ValueKind.NUMBER
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div):
        kinds = {_kind(scope, side) for side in (node.this, node.expression)}
        return ValueKind.AMOUNT if ValueKind.AMOUNT in kinds else ValueKind.NUMBER
    return None
