"""Checks of a statement's joins against the cards of the tables it reads (`workers.turns.answer_checks`).

A join that runs can still match each row with many: a small model joins a line table to a return table on the order
number alone although both hold the line number too, or writes `T1.WH_CD = T1.WH_CD`, a condition that links the
joined table to nothing. Either way every count and sum after it grows, and the result looks like any other. Two
checks, from the statement and the cards alone:
- **self**: a join condition that compares a column with itself;
- **partial key**: a join that equates some columns of one table's primary key with the same-named columns of the
  other table, while the other table also holds the rest of that key by name.
Each gives the user's line (`say`) and the repair call's hint.

When a statement returns no rows, `disjoint_joins` names the join conditions whose two columns share none of the
values read (probed through the permission-checked SQL service): for the hint of the call that writes it again, and
for leaving out a join that only filters without a model call (`workers.turns.join_drops`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp


def _key(card: dict[str, Any]) -> list[str]:
    """The table's primary key columns in upper case, from the card's key or its columns marked primary."""
    named = card.get("primary_key") or [c.get("name") for c in card.get("columns") or [] if c.get("key") == "primary"]
    return [str(n).upper() for n in named if n]


def _columns(card: dict[str, Any]) -> set[str]:
    return {str(c.get("name")).upper() for c in card.get("columns") or [] if c.get("name")}


def _owner(column: exp.Column, aliases: dict[str, str], cards: dict[str, dict[str, Any]]) -> str | None:
    """The table (upper case) a column of the condition belongs to: by its qualifier, or the one table read that
    has a column of that name."""
    if column.table:
        return aliases.get(column.table.upper())
    holders = [t for t in dict.fromkeys(aliases.values()) if column.name.upper() in _columns(cards.get(t) or {})]
    return holders[0] if len(holders) == 1 else None


def _written(column: exp.Column) -> str:
    return f"{column.table}.{column.name}" if column.table else column.name


def join_problems(tree: exp.Expr, cards: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(say, hint) for each join of `tree` that compares a column with itself or leaves out part of a shared key;
    `cards`: the cards of the tables the statement could read, by upper-case name."""
    aliases = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table)}
    problems: list[tuple[str, str]] = []
    for join in tree.find_all(exp.Join):
        condition = join.args.get("on")
        if not isinstance(condition, exp.Expr):
            continue
        equated: dict[tuple[str, str], set[str]] = {}
        for equal in condition.find_all(exp.EQ):
            left, right = equal.left, equal.right
            if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
                continue
            tables = _owner(left, aliases, cards), _owner(right, aliases, cards)
            if left.name.upper() == right.name.upper() and left.table.upper() == right.table.upper():
                problems.append(_self(_written(left)))
            elif tables[0] and tables[1] and tables[0] != tables[1] and left.name.upper() == right.name.upper():
                pair = (min(tables[0], tables[1]), max(tables[0], tables[1]))
                equated.setdefault(pair, set()).add(left.name.upper())
        for (first, second), names in equated.items():
            problems += _partial(first, second, names, cards)
    return list(dict.fromkeys(problems))


def _self(column: str) -> tuple[str, str]:
    return (
        f"The join compares {column} with itself, so it links the tables by nothing and rows may be counted more "
        "than once.",
        f"The join condition {column} = {column} compares a column with itself: join the tables on the columns "
        "they share.",
    )


def _partial(first: str, second: str, names: set[str], cards: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    found = []
    for table, other in ((first, second), (second, first)):
        key = _key(cards.get(table) or {})
        missing = [k for k in key if k not in names]
        if len(key) < 2 or not missing or not names & set(key):
            continue
        if not set(missing) <= _columns(cards.get(other) or {}):
            continue
        found.append(_partial_line(table, other, sorted(names & set(key)), missing))
    return found


def _partial_line(table: str, other: str, used: Sequence[str], missing: Sequence[str]) -> tuple[str, str]:
    left, rest = ", ".join(used), ", ".join(missing)
    return (
        f"I joined {table} and {other} on {left} only; both also have {rest}, so rows may be counted more than once.",
        f"The join of {table} and {other} matches {left} but not {rest}, which both tables have and {table}'s key "
        "includes: join on all of them.",
    )


def _card_name(card: dict[str, Any], name: str) -> str | None:
    found = (str(c["name"]) for c in card.get("columns") or [] if str(c.get("name") or "").upper() == name.upper())
    return next(found, None)


@dataclass(frozen=True)
class DisjointJoin:
    """A join condition whose two columns share none of the values read."""

    condition: str  # the equality as sqlglot writes it without a dialect: `T1.CTGRY_CD = T2.CODE_GRP`
    tables: tuple[str, str]  # the two tables it compares, by upper-case name
    line: str  # what the repair call is told


def disjoint_joins(
    tree: exp.Expr,
    cards: dict[str, dict[str, Any]],
    sample: Callable[[str, str], list[str] | None],
    held: Callable[[str, str, Sequence[str]], set[str] | None],
) -> list[DisjointJoin]:
    """For a statement that returned no rows: each join condition whose two columns share none of the values read
    (`sample`: the most frequent values of a column; `held`: which of some values a column holds), as
    `CTGRY_CD = CODE_GRP` compares category codes with the names of code groups. Tables by upper-case name."""
    aliases = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table)}
    found: dict[str, DisjointJoin] = {}
    for join in tree.find_all(exp.Join):
        condition = join.args.get("on")
        if not isinstance(condition, exp.Expr):
            continue
        for equal in condition.find_all(exp.EQ):
            left, right = equal.left, equal.right
            if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
                continue
            sides = []
            for column in (left, right):
                table = _owner(column, aliases, cards)
                name = _card_name(cards.get(table or "") or {}, column.name) if table else None
                if table is None or name is None:
                    break
                sides.append((table, name, sample(table, name) or []))
            if len(sides) != 2 or sides[0][0] == sides[1][0] or not sides[0][2] or not sides[1][2]:
                continue
            (t0, c0, v0), (t1, c1, v1) = sides
            if held(t1, c1, v0) != set() or held(t0, c0, v1) != set():
                continue  # shared values, or a probe that could not tell
            some0, some1 = (", ".join(f"'{v}'" for v in values[:3]) for values in (v0, v1))
            line = (
                f"The join condition {_written(left)} = {_written(right)} matches no rows: {t0}.{c0} holds values "
                f"such as {some0}, and {t1}.{c1} values such as {some1}. Join on columns that hold the same values, "
                "or leave that join out."
            )
            found.setdefault(line, DisjointJoin(equal.sql(), (t0, t1), line))
    return list(found.values())
