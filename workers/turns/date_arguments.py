"""A date function given a column no table of the statement has, read from the one column that holds dates.

A small model grouping a table by month writes `strftime('%Y-%m', d)` or `YEAR(order_date)` for a column that the
table does not have, and the statement fails with "no such column". When the argument of a date function names a
column that no table the statement reads has, and those tables hold exactly one column of dates or of periods
written as digits (`SALES_YM` holding `202401`: `workers.turns.date_use`), that column is the only one a date can
come from: the statement is run again with it, without a model call, and the answer says so. Two such columns, or
none, or a column the statement reads elsewhere as something else leave the statement to the repair call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlglot import exp

from workers.turns.answer_checks import parse
from workers.turns.date_use import date_arguments, holds_dates, holds_periods
from workers.turns.join_paths import Bridged


def dated_argument(sql: str, dialect: str | None, column: str, cards: Mapping[str, dict[str, Any]]) -> Bridged | None:
    """`sql` with the unknown `column` (as the engine's error names it) read from the one date column of the
    tables it reads, where a date function takes it (module doc); None otherwise. `cards`: by upper-case name."""
    qualifier, _, bare = column.replace('"', "").replace("`", "").rpartition(".")
    tree = parse(sql, dialect)
    if tree is None or not bare:
        return None
    tables = {t.alias_or_name.upper(): t for t in tree.find_all(exp.Table) if t.name.upper() in cards}
    if not tables or len({t.name.upper() for t in tree.find_all(exp.Table)} - set(cards)) > 0:
        return None  # a table (or a CTE) the cards do not describe may hold it
    if any(_has(cards[t.name.upper()], bare) for t in tables.values()):
        return None
    named = [
        c
        for c in tree.find_all(exp.Column)
        if c.name.upper() == bare.upper() and (not qualifier or c.table.upper() == qualifier.upper())
    ]
    dated = {id(c) for c in date_arguments(tree)}
    if not named or not any(id(c) in dated for c in named):
        return None
    found = [(alias, str(c["name"])) for alias, t in tables.items() for c in _dates(cards[t.name.upper()])]
    if len(found) != 1:
        return None  # none, two, or one table read twice (a self-join): no one reading
    alias, name = found[0]
    table = tables[alias]
    for node in named:
        node.replace(exp.column(name, table=table.alias_or_name if len(tables) > 1 else None))
    note = f"I read the dates from {table.name}.{name}, the one date column of the tables read, for {bare}."
    return Bridged(tree.sql(dialect=dialect), note)


def _has(card: dict[str, Any], name: str) -> bool:
    return any(str(c.get("name") or "").upper() == name.upper() for c in card.get("columns") or [])


def _dates(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The card's columns holding dates, or periods written as digits of one length."""
    columns = [c for c in card.get("columns") or [] if isinstance(c, dict) and c.get("name")]
    return [c for c in columns if holds_dates(c) or holds_periods(c)]
