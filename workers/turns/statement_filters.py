"""The filters of a statement: each comparison of a column with text literals (=, IN, LIKE), the column resolved
to the table of the cards it belongs to (`workers.turns.answer_checks`), and the statement with some of them left
out (`unfiltered`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp


@dataclass(frozen=True)
class Filter:
    table: str  # the table as the selection names it
    column: str
    op: str  # "eq", "in", "like"
    literals: tuple[str, ...]
    #: The comparison in the parsed statement it was read from (not part of what the filter is).
    node: exp.Expr | None = field(default=None, compare=False, repr=False)


def filters(tree: exp.Expr, cards: dict[str, dict[str, Any]]) -> list[Filter]:
    """The comparisons of a column with text literals (=, IN, LIKE), the column resolved to a table of `cards`."""
    aliases = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table)}
    found: list[Filter] = []
    for node in tree.find_all(exp.EQ, exp.In, exp.Like, exp.ILike):
        if isinstance(node, exp.In):
            column, literals = node.this, [e for e in node.expressions if isinstance(e, exp.Literal)]
            if len(literals) != len(node.expressions):
                continue
            op = "in"
        else:
            left, right = node.this, node.expression
            column, literal = (left, right) if isinstance(left, exp.Column) else (right, left)
            literals = [literal] if isinstance(literal, exp.Literal) else []
            op = "eq" if isinstance(node, exp.EQ) else "like"
        if not isinstance(column, exp.Column) or not literals or not all(lit.is_string for lit in literals):
            continue
        table = table_of(column, aliases, cards)
        if table is not None:
            name = column_name(cards[table], column.name)
            found.append(Filter(table, name, op, tuple(lit.this for lit in literals), node))
    return found


def table_of(column: exp.Column, aliases: dict[str, str], cards: dict[str, dict[str, Any]]) -> str | None:
    if column.table:
        table = aliases.get(column.table.upper(), column.table.upper())
        return table if table in cards else None
    read = [t for t in dict.fromkeys(aliases.values()) if t in cards]
    holding = [t for t in read if column_name(cards[t], column.name)]
    return holding[0] if len(holding) == 1 else None


def column_name(card: dict[str, Any], name: str) -> str:
    return str(card_column(card, name).get("name") or "")


def card_column(card: dict[str, Any], name: str) -> dict[str, Any]:
    found = (
        c for c in card.get("columns", []) if isinstance(c, dict) and str(c.get("name", "")).upper() == name.upper()
    )
    return next(found, {})


@dataclass(frozen=True)
class Unfiltered:
    """A statement with filters left out (`sql`), and what the answer says about it (`note`)."""

    sql: str
    note: str


def unfiltered(tree: exp.Expr, drops: Sequence[tuple[Filter, str]], dialect: str | None) -> Unfiltered | None:
    """The statement of `tree` (changed in place) without each filter read from it whose every literal is among
    `drops` and that the WHERE clause requires (a term of its ANDs, not under an OR, a NOT or a join's ON); None when
    there is none."""
    left_out: list[Filter] = []
    removed: set[int] = set()
    for f, _ in drops:
        node = f.node
        if node is None or id(node) in removed or not _required(node):
            continue
        if not set(f.literals) <= {literal for g, literal in drops if g.node is node}:
            continue
        removed.add(id(node))
        left_out.append(f)
        while isinstance(node.parent, exp.Paren):
            node = node.parent
        parent = node.parent
        if isinstance(parent, exp.And):
            parent.replace(parent.right if parent.left is node else parent.left)
        elif isinstance(parent, exp.Where):
            parent.pop()
    if not left_out:
        return None
    said = ", ".join(_shown(f) for f in left_out)
    return Unfiltered(tree.sql(dialect=dialect), f"I left out the filter {said}, which the question does not ask for.")


def _shown(f: Filter) -> str:
    if len(f.literals) == 1:
        return f"{f.column} = '{f.literals[0]}'"
    return f"{f.column} IN (" + ", ".join(f"'{v}'" for v in f.literals) + ")"


def _required(node: exp.Expr) -> bool:
    parent = node.parent
    while isinstance(parent, exp.Paren | exp.And):
        parent = parent.parent
    return isinstance(parent, exp.Where)
