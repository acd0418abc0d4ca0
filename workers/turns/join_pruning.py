"""Joins a small model's statement does not need, taken out before it runs (the guided path).

A small model shown two or three related tables often joins one it then does not use, and the join multiplies or
filters the rows of the others: `SUM(o.TOT_AMT)` over orders joined to their lines counts each order once per line,
a product's quantity sold joined to its stock rows counts each sale once per warehouse (the fan trap of reporting
tools), a listing of teachers joined to their course assignments repeats a teacher once per course and leaves out
those without one, and a count of VIP customers joined to the orders counts only those who ordered. A table of a
join is left out when
- the statement does not count its rows: no COUNT(*), and no COUNT without DISTINCT of one of its columns or of a
  column without a table (`COUNT(*)` over orders joined to their lines may mean the lines); a COUNT of another
  table's column is multiplied by the join like a sum;
- it is a leaf of the join tree: exactly one join condition names it, an equality (or several, with AND) between its
  columns and those of one other table, in an inner or left join;
- the join may match several of its rows (the condition does not cover its primary key: a join that matches one
  row multiplies nothing);
- the statement reads no column of it elsewhere, or only columns that condition equates with the other table's
  (those are read from the other table instead);
- the question says none of the words of its name that the other tables' names do not have ("the order amount of
  orders with returns" and "customers who placed orders" ask for the join).
Only the statement's own SELECT is looked at, not a subquery or a part of EXCEPT or UNION. Anything the rule cannot
read for certain (a star, an unqualified column the table has, a column of it in a nested query, a table of a
subquery, a join without ON) leaves the statement as the model wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

from sqlglot import exp

from core.text.identifiers import expand_words
from workers.turns.answer_checks import parse
from workers.turns.selection import name_words, says


@dataclass(frozen=True)
class Shown:
    """A table the model was shown: its column names and its primary key, in lower case."""

    columns: frozenset[str]
    primary_key: frozenset[str]


def without_unneeded_joins(sql: str, dialect: str | None, question: str, tables: Mapping[str, Shown]) -> str:
    """`sql` without the joins the question does not need; `sql` itself when there are none (or it does not parse).
    `tables`: the tables the model was shown, by upper-case name."""
    tree = parse(sql, dialect)
    if tree is None:
        return sql
    if not isinstance(tree, exp.Select):
        return sql  # a set operation's parts or a WITH query: their joins may be what tells rows apart
    said = name_words(question)
    changed = False
    while _prune_one(tree, said, tables):
        changed = True
    return tree.sql(dialect=dialect) if changed else sql


def _alias(table: exp.Table) -> str:
    return table.alias_or_name.lower()


def _tables(select: exp.Select) -> list[exp.Table] | None:
    """The FROM table and the joined tables of `select`, or None when one is not a plain table or a join has no
    ON condition or is not an inner or left join."""
    source = select.args.get("from_")
    if source is None or not isinstance(source.this, exp.Table):
        return None
    tables = [source.this]
    for join in select.args.get("joins") or []:
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        if not isinstance(join.this, exp.Table) or join.args.get("on") is None or join.args.get("using"):
            return None
        if side not in ("", "LEFT") or kind not in ("", "INNER", "OUTER"):
            return None
        tables.append(join.this)
    aliases = [_alias(t) for t in tables]
    return tables if len(set(aliases)) == len(aliases) else None


def _equalities(condition: exp.Expression) -> list[tuple[exp.Column, exp.Column]] | None:
    """The column pairs of an AND of column equalities; None when the condition is anything else."""
    parts = list(condition.flatten()) if isinstance(condition, exp.And) else [condition]
    pairs = []
    for part in parts:
        if not isinstance(part, exp.EQ):
            return None
        left, right = part.left, part.right
        if not isinstance(left, exp.Column) or not isinstance(right, exp.Column):
            return None
        pairs.append((left, right))
    return pairs


def _own(node: exp.Expr, select: exp.Select) -> bool:
    return node.find_ancestor(exp.Select) is select


def _prune_one(select: exp.Select, said: set[str], shown: Mapping[str, Shown]) -> bool:
    tables = _tables(select)
    if tables is None or len(tables) < 2 or any(isinstance(e, exp.Star) for e in select.expressions):
        return False
    joins: list[exp.Join] = list(select.args.get("joins") or [])
    for index, table in enumerate(tables):
        known = shown.get(table.name.upper())
        if known is None:
            continue
        others = [t for t in tables if t is not table]
        if _counts_rows_of(select, table) or not _unsaid(table, others, said):
            continue
        plan = _leaf_plan(select, table, index, joins, known.columns)
        if plan is None:
            continue
        link, substitutes = plan
        if known.primary_key and known.primary_key <= set(substitutes):
            continue  # it matches one row at most: nothing is multiplied
        for column in list(select.find_all(exp.Column)):
            if _own(column, select) and column.table.lower() == _alias(table) and not inside(column, link):
                column.replace(substitutes[column.name.lower()].copy())
        if index == 0:
            partner = link.this
            select.set("from_", exp.From(this=partner.copy()))
        joins.remove(link)
        select.set("joins", joins or None)
        return True
    return False


def _counts_rows_of(select: exp.Select, table: exp.Table) -> bool:
    """`select` counts the rows of `table`, or may: COUNT(*), or COUNT of a column of `table` (or of a column
    without a table) without DISTINCT."""
    alias = _alias(table)
    for count in select.find_all(exp.Count):
        if not _own(count, select) or isinstance(count.this, exp.Distinct):
            continue
        counted = count.this
        if isinstance(counted, exp.Star) or counted is None:
            return True
        if any(c.table.lower() in ("", alias) for c in counted.find_all(exp.Column)):
            return True
    return False


def _unsaid(table: exp.Table, others: list[exp.Table], said: set[str]) -> bool:
    """The question says none of the words of `table`'s name that the other tables' names lack, abbreviations
    written out too (`ORD_MST` says "order")."""
    theirs = {w for t in others for w in _words(t.name)}
    own = {w for w in _words(table.name) if not w.isdigit()} - theirs
    return not any(says(said, w) for w in own)


def _words(name: str) -> set[str]:
    return name_words(name) | name_words(" ".join(expand_words(name)))


def inside(node: exp.Expr, ancestor: exp.Expr) -> bool:
    """Whether `ancestor` holds `node` (at any depth)."""
    parent = node.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


def _leaf_plan(
    select: exp.Select, table: exp.Table, index: int, joins: list[exp.Join], known: Set[str]
) -> tuple[exp.Join, dict[str, exp.Column]] | None:
    """The one join that links `table` (the FROM table when `index` is 0) and, for each of its columns the
    statement reads elsewhere, the other table's column to read instead; None when `table` cannot be left out."""
    alias = _alias(table)
    naming = [j for j in joins if any(c.table.lower() == alias for c in j.args["on"].find_all(exp.Column))]
    if len(naming) != 1:
        return None
    link = naming[0]
    named = {c.table.lower() for c in link.args["on"].find_all(exp.Column)}
    if index == 0:
        # the joined table becomes the FROM table: only where the join keeps its rows as the FROM table's did
        if named != {alias, _alias(link.this)} or (link.side or "").upper() == "LEFT":
            return None
    elif link.this is not table or len(named - {alias}) != 1:
        return None
    equalities = _equalities(link.args["on"])
    if equalities is None:
        return None
    substitutes: dict[str, exp.Column] = {}
    for left, right in equalities:
        if left.table.lower() == alias and right.table.lower() not in ("", alias):
            substitutes[left.name.lower()] = right
        elif right.table.lower() == alias and left.table.lower() not in ("", alias):
            substitutes[right.name.lower()] = left
        else:
            return None
    for column in select.find_all(exp.Column):
        if inside(column, link):
            continue
        owner = column.table.lower()
        if not _own(column, select):
            if owner == alias:
                return None  # a nested query reads it (or has a table of the same alias): leave it
            continue
        if owner == alias and column.name.lower() not in substitutes:
            return None
        if not owner and column.name.lower() in known:
            return None
    return link, substitutes
