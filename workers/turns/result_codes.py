"""What the codes of a result mean, for the answer's sentence (SPEC §4, guided path): "B20 (Electronics) has the
most products" where the statement returned the category code alone.

A column of the outer SELECT that is a plain column of a table the statement reads, whose card knows the meanings
of its codes (`catalog.code_values`), gives its codes' meanings; nothing else does (an expression, a column of a
subquery or a CTE, a column no card of the statement's tables holds, a statement that does not parse).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlglot import exp

from workers.turns.answer_checks import parse
from workers.turns.code_meanings import meant_codes
from workers.turns.statement_filters import card_column, table_of

#: Meanings by code, by the index of the result column they are the codes of.
Meanings = dict[int, dict[str, str]]


def result_meanings(sql: str, dialect: str | None, cards: Mapping[str, dict[str, Any]]) -> Meanings:
    """The meanings of the codes each result column of `sql` holds; `cards`: the cards of the tables the statement
    could read, by upper-case name."""
    tree = parse(sql, dialect)
    if not isinstance(tree, exp.Select):
        return {}
    ctes = {c.alias_or_name.upper() for c in tree.find_all(exp.CTE)}
    aliases = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table) if t.name.upper() not in ctes}
    readable = {name: card for name, card in cards.items() if name in aliases.values()}
    found: Meanings = {}
    for index, projection in enumerate(tree.expressions):
        column = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(column, exp.Column) or isinstance(column.this, exp.Star):
            continue
        if column.table and column.table.upper() not in aliases:
            continue  # a subquery's or a CTE's column
        table = table_of(column, aliases, dict(readable))
        if table is None:
            continue
        codes = meant_codes(card_column(readable[table], column.name))
        meanings = {str(c["code"]): str(c["meaning"]) for c in codes if c.get("meaning")}
        if meanings:
            found[index] = meanings
    return found


def with_meanings(cells: list[list[str]], meanings: Meanings) -> list[list[str]]:
    """`cells` with each code of a column in `meanings` written with its meaning ("B20 (Electronics)"), unless the
    row already says that meaning in another cell (the statement joined the code's name in)."""
    if not meanings:
        return cells
    written = []
    for row in cells:
        others = {cell.casefold() for cell in row}
        written.append(
            [
                f"{cell} ({meanings[i][cell]})"
                if i in meanings and cell in meanings[i] and meanings[i][cell].casefold() not in others
                else cell
                for i, cell in enumerate(row)
            ]
        )
    return written
