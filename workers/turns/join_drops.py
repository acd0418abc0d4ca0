"""A join that can match nothing, left out without a model call (the guided path, on an empty result or an error).

A small model that sees a code table beside the table it counts sometimes joins the two on columns that hold
different things (`PRD_MST.CTGRY_CD = CODE_MST.CODE_GRP`: category codes against the names of code groups). The
statement runs, returns no rows, and a repair call told so often writes the same join again. When the join's two
columns share none of the values read (`workers.turns.join_checks.disjoint_joins`) and the joined table only
filters, the join cannot have been what the question asks for, so it is left out and the statement runs again:
- the table is joined (not the FROM table), by an inner or left join whose ON holds the disjoint equality;
- no other join condition names it, and the statement reads none of its columns outside that ON and the WHERE
  conditions (top-level AND parts) that name it alone: those conditions go with it, and the answer says so;
- no unqualified column could be one of its columns, and no nested query names its alias.
Anything else (a column of the table selected, grouped or ordered by, a subquery, a set operation) leaves the
statement to the repair call and its hint.

The same holds for a join whose condition names a column one of its tables lacks (`ORD_MST.PRD_CD` to reach the
products only to keep those in use): the statement fails, and when the joined table only filters it is left out
(`without_missing_column_join`) instead of a repair call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass

from sqlglot import exp

from workers.turns.answer_checks import parse
from workers.turns.join_checks import DisjointJoin
from workers.turns.join_pruning import inside

#: Why a join whose columns share no values was left out.
NO_ROWS_REASON = "the joined columns share no values, so with it the query found no rows"


@dataclass(frozen=True)
class DroppedJoin:
    """The statement without the join, and what was left out, for the answer's note."""

    sql: str
    table: str  # the table left out, as the statement names it
    condition: str  # the join condition that matched nothing, as written
    filters: tuple[str, ...]  # the WHERE conditions that named only that table, as written
    literals: tuple[str, ...]  # the string and number literals of those conditions
    reason: str = NO_ROWS_REASON  # why it was left out, for the note

    def asked(self, question: str) -> bool:
        """Whether a filter left out compares with a value the question names (every word of it said)."""
        said = set(re.findall(r"\w+", question.lower()))
        for literal in self.literals:
            words = re.findall(r"\w+", literal.lower())
            if words and set(words) <= said:
                return True
        return False

    def note(self) -> str:
        """The line the answer carries."""
        filters = f", and its filter {' AND '.join(self.filters)}" if self.filters else ""
        return f"I left out the join of {self.table} on {self.condition}{filters}: {self.reason}."


def without_disjoint_join(
    sql: str, dialect: str | None, disjoint: Sequence[DisjointJoin], columns: Mapping[str, Set[str]]
) -> DroppedJoin | None:
    """`sql` without the first join of `disjoint` whose table only filters; None when none can be left out.
    `columns`: the column names (upper case) of the tables the statement may read, by upper-case table name."""
    for found in disjoint:

        def matches(join: exp.Join, equal: exp.EQ, found: DisjointJoin = found) -> bool:
            return join.this.name.upper() in found.tables and equal.sql() == found.condition

        dropped = _without_join(sql, dialect, matches, columns, NO_ROWS_REASON)
        if dropped is not None:
            return dropped
    return None


def without_missing_column_join(
    sql: str, dialect: str | None, column: str, columns: Mapping[str, Set[str]]
) -> DroppedJoin | None:
    """`sql` without the join whose condition names `column` (as an engine's "no such column" error writes it,
    qualified: `T1.PRD_CD`), which a table it names lacks, when the joined table only filters; None otherwise."""
    qualifier, _, name = column.replace('"', "").replace("`", "").upper().rpartition(".")
    tree = parse(sql, dialect)
    if not qualifier or tree is None:
        return None
    aliases = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table)}
    lacking = aliases.get(qualifier)
    if lacking is None or name in columns.get(lacking, {name}):
        return None

    def matches(join: exp.Join, equal: exp.EQ) -> bool:
        return any(c.table.upper() == qualifier and c.name.upper() == name for c in equal.find_all(exp.Column))

    return _without_join(sql, dialect, matches, columns, f"{lacking} has no column {name}")


def _without_join(
    sql: str,
    dialect: str | None,
    matches: Callable[[exp.Join, exp.EQ], bool],
    columns: Mapping[str, Set[str]],
    reason: str,
) -> DroppedJoin | None:
    """`sql` without the first join with an equality that `matches` whose table only filters."""
    tree = parse(sql, dialect)
    if not isinstance(tree, exp.Select):
        return None
    joins: list[exp.Join] = list(tree.args.get("joins") or [])
    for join in joins:
        table, on = join.this, join.args.get("on")
        if not isinstance(table, exp.Table) or not isinstance(on, exp.Expr):
            continue
        condition = next((e for e in on.find_all(exp.EQ) if matches(join, e)), None)
        if condition is None:
            continue
        filters = _filters_only(tree, join, columns.get(table.name.upper(), set()))
        if filters is None:
            continue
        names = {t.alias_or_name.upper(): t.name for t in tree.find_all(exp.Table)}
        written = tuple(_plain(f, names, dialect) for f in filters)
        said = _plain(condition, names, dialect)
        literals = tuple(str(v.this) for f in filters for v in f.find_all(exp.Literal))
        _remove(tree, join, joins, filters)
        return DroppedJoin(tree.sql(dialect=dialect), table.name, said, written, literals, reason)
    return None


def _plain(node: exp.Expr, names: Mapping[str, str], dialect: str | None) -> str:
    """`node` as written, its columns qualified by their tables' names instead of aliases (for the user)."""
    copy = node.copy()
    for column in copy.find_all(exp.Column):
        if column.table and column.table.upper() in names:
            column.set("table", exp.to_identifier(names[column.table.upper()]))
    return copy.sql(dialect=dialect)


def _conjuncts(condition: exp.Expr | None) -> list[exp.Expr]:
    if condition is None:
        return []
    return list(condition.flatten()) if isinstance(condition, exp.And) else [condition]


def _filters_only(select: exp.Select, join: exp.Join, own_columns: Set[str]) -> list[exp.Expr] | None:
    """The WHERE parts that go with `join` when its table only filters; None when the table does more."""
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    on = join.args.get("on")
    if side not in ("", "LEFT") or kind not in ("", "INNER", "OUTER") or not isinstance(on, exp.Expr):
        return None
    alias = join.this.alias_or_name.upper()
    where = select.args.get("where")
    parts = _conjuncts(where.this if where is not None else None)
    filters = [p for p in parts if _names(p, alias)]
    if any(not _only(p, alias) for p in filters):
        return None  # a WHERE part that compares it with another table: it does more than filter
    for column in select.find_all(exp.Column):
        if inside(column, on) or any(inside(column, f) for f in filters):
            continue
        qualifier = column.table.upper()
        if qualifier == alias or (not qualifier and column.name.upper() in own_columns):
            return None
    for other in select.find_all(exp.Table):
        if other is not join.this and other.alias_or_name.upper() == alias:
            return None  # the alias is used again (a nested query): leave the statement as it is
    return filters


def _names(node: exp.Expr, alias: str) -> bool:
    return any(c.table.upper() == alias for c in node.find_all(exp.Column))


def _only(node: exp.Expr, alias: str) -> bool:
    """Every column `node` reads is qualified with `alias`, and it holds no nested query."""
    columns = list(node.find_all(exp.Column))
    return not node.find(exp.Select) and all(c.table.upper() == alias for c in columns)


def _remove(select: exp.Select, join: exp.Join, joins: list[exp.Join], filters: list[exp.Expr]) -> None:
    joins.remove(join)
    select.set("joins", joins or None)
    if not filters:
        return
    where = select.args["where"]
    kept = [p for p in _conjuncts(where.this) if all(p is not f for f in filters)]
    if not kept:
        select.set("where", None)
        return
    condition = kept[0]
    for part in kept[1:]:
        condition = exp.and_(condition, part)
    select.set("where", exp.Where(this=condition))
