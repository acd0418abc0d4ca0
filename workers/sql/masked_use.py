"""Computing with a masked column (SPEC §6): a query that would answer with a number made from masked values.

A column masked `null`, `redact` or `hash` for the user reads as NULL, '***' or a keyed hash, so only what treats its
values as opaque tokens gives a true answer: reading it, counting it (`COUNT`, `COUNT(DISTINCT)`), grouping,
ordering and partitioning by it, testing it for NULL, and comparing it for equality with another column or a
subquery (a join), or, for a `hash`, with a hash the user was shown. Summing, averaging, the smallest or largest,
arithmetic, ordered comparisons, pattern matching, functions over it and comparing it with a constant give a number
or a set of rows that looks right and is not (SQLite sums the digits a hash starts with; `SAL_AMT = 5000000`
matches no row). Such a query is denied as one without permission, with a message that names the column and what
still works, so the model tells the user instead of answering with a made-up figure. A column of a view, a derived
table or a CTE that reads a masked column as it is counts as masked; a view that computes with one is refused the
same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp

#: Where a masked column may stand as it is: the parent node's type.
_AS_IT_IS = (exp.Select, exp.Alias, exp.Group, exp.Ordered, exp.Count, exp.Window, exp.Is)
_EQUALITY = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.NullSafeNEQ)
#: How a `hash` mask writes a value (`workers.sql.column_masks`).
_HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class MaskedReference:
    """A table or view reference of the query with columns masked for the user: the node, the name the query reads
    it by, its masked columns (folded name → mask) and how it is shown in a message."""

    node: exp.Expr  # a table, or a derived table (a subquery)
    alias: str
    masks: Mapping[str, str]
    shown: str


def masked_use_refusal(tree: exp.Expr, references: Sequence[MaskedReference], view: str | None = None) -> str | None:
    """The refusal for the first masked column `tree` computes with (`tree` the definition of `view`), or None.
    Derived tables and CTEs of `tree` that read a masked column as it is pass its mask on to their own column."""
    references = [r for r in references if r.masks]
    if not references:
        return None
    references += _derived(tree, references)
    for column in tree.find_all(exp.Column):
        for reference in _candidates(column, references):
            kind = reference.masks.get(column.name.casefold())
            if kind is not None and not _opaque_use(column, kind):
                where = f"view {view} computes with {column.name}" if view else column.name
                return (
                    f"no permission: {where} of {reference.shown} is masked for you ({kind}), so its values cannot "
                    "be summed, averaged, compared with a value or computed with (the result would look right and "
                    "be wrong); it can be shown, counted, grouped and joined on. Tell the user they have no "
                    "permission to see this figure"
                )
    return None


def masked_outputs(query: exp.Query, columns: Sequence[str], references: Sequence[MaskedReference]) -> dict[str, str]:
    """The columns (`columns`, the view's own names in order) of a view defined by `query` that read a masked column
    as it is, with its mask (folded names)."""
    found: dict[str, str] = {}
    selects = _first(query).selects
    for projection in selects:  # `*` and `t.*` pass every masked column on, under its own name
        star = projection if isinstance(projection, exp.Star) else None
        if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
            star = projection.this
        if star is not None:
            scope = projection.find_ancestor(exp.Select)
            qualifier = projection.table if isinstance(projection, exp.Column) else ""
            for reference in references:
                same = reference.alias.casefold() == qualifier.casefold() if qualifier else True
                if same and reference.node.find_ancestor(exp.Select) is scope:
                    found.update(reference.masks)
    if found:
        return found
    for name, projection in zip(columns, selects, strict=False):
        value = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(value, exp.Column):
            continue
        for reference in _candidates(value, references):
            kind = reference.masks.get(value.name.casefold())
            if kind is not None:
                found[name.casefold()] = kind
    return found


def _derived(tree: exp.Expr, references: Sequence[MaskedReference]) -> list[MaskedReference]:
    """References to derived tables and CTEs with masked columns, innermost first (so one over another counts)."""
    found: list[MaskedReference] = []
    nested = [n for n in tree.find_all(exp.Subquery, exp.CTE) if n.alias and isinstance(n.this, exp.Query)]
    nested.sort(key=lambda n: -_depth(n))  # the innermost first
    for node in nested:
        query = node.this
        assert isinstance(query, exp.Query)
        names = [s.alias_or_name for s in _first(query).selects]
        masks = masked_outputs(query, names, [*references, *found])
        if not masks:
            continue
        if isinstance(node, exp.Subquery):
            found.append(MaskedReference(node, node.alias, masks, node.alias))
            continue
        for table in tree.find_all(exp.Table):  # the CTE's readers: tables named like it, without a schema
            if not table.args.get("db") and table.name.casefold() == node.alias.casefold():
                found.append(MaskedReference(table, table.alias_or_name, masks, node.alias))
    return found


def _depth(node: exp.Expr) -> int:
    depth = 0
    while node.parent is not None:
        node, depth = node.parent, depth + 1
    return depth


def _first(query: exp.Query) -> exp.Query:
    while isinstance(query, exp.SetOperation):
        query = query.this
    return query


def _opaque_use(column: exp.Column, kind: str) -> bool:
    node: exp.Expr = column
    parent = node.parent
    while isinstance(parent, exp.Paren):
        node, parent = parent, parent.parent
    if isinstance(parent, exp.Distinct):
        return isinstance(parent.parent, exp.Count | exp.Select)
    if isinstance(parent, _AS_IT_IS):
        return not isinstance(parent, exp.Is) or isinstance(parent.expression, exp.Null)
    if isinstance(parent, _EQUALITY):
        other = _unwrapped(parent.expression if parent.this is node else parent.this)
        return isinstance(other, exp.Column | exp.Subquery | exp.Select) or (kind == "hash" and _a_hash(other))
    if isinstance(parent, exp.In):
        if parent.this is not node:
            return False
        listed = parent.expressions
        return parent.args.get("query") is not None or (kind == "hash" and bool(listed) and all(map(_a_hash, listed)))
    return False


def _a_hash(node: exp.Expr | None) -> bool:
    """A hash the user was shown, written back as a string: comparing with it finds the same value again."""
    return isinstance(node, exp.Literal) and node.is_string and _HASH.fullmatch(node.this) is not None


def _unwrapped(node: exp.Expr | None) -> exp.Expr | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _candidates(column: exp.Column, references: Sequence[MaskedReference]) -> list[MaskedReference]:
    qualifier = column.table
    if qualifier:
        return [r for r in references if r.alias.casefold() == qualifier.casefold()]
    scope = column.find_ancestor(exp.Select)
    return [r for r in references if r.node.find_ancestor(exp.Select) is scope]
