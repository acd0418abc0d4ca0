"""An active flag's filter on a table that has no such flag, left out when the question does not ask for it.

The cards of flag columns (`USE_YN`, `IS_DELETED`) tell the model that current rows need a filter on them
(`catalog.misuse`), and a small model adds that filter to tables that have no flag: `USE_YN = 'Y'` on the orders,
where only the warehouses and customers have one, and the statement fails with "no such column". When no table the
statement reads has the column, a shown table's card marks a column of that name as an active or soft-delete flag,
and the question names neither the flag's rows ("active", "deleted") nor the filter's values, the filter asked for
nothing the tables hold and nothing the user said: the statement is run again without it (a term of the WHERE
clause's ANDs only, not under an OR, a NOT or a join's ON), without a model call, and the answer says what was left
out. Any other unknown column is left to the repair: leaving out a filter the model meant (a status, a title) turns
a statement that failed into a wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sqlglot import exp

from catalog.misuse import SOFT_DELETE_WATCH
from workers.turns.answer_checks import parse
from workers.turns.flag_notes import names_flag
from workers.turns.statement_filters import Filter, Unfiltered, card_column, unfiltered


def without_unknown_filter(
    sql: str, dialect: str | None, column: str, question: str, cards: Mapping[str, dict[str, Any]]
) -> Unfiltered | None:
    """`sql` without the filters on `column` (as the engine's error names it, perhaps qualified), when every table
    it reads is among `cards` (the shown tables' cards, by upper-case name) and none has that column, another's card
    marks it as an active flag, and the question names neither the flag nor the filters' values; None otherwise
    (module doc)."""
    qualifier, _, bare = column.replace('"', "").replace("`", "").rpartition(".")
    tree = parse(sql, dialect)
    if tree is None or not bare:
        return None
    read = {t.name.upper() for t in tree.find_all(exp.Table)}
    if not read or not read <= set(cards) or any(card_column(cards[t], bare) for t in read):
        return None
    flag = (str(card_column(card, bare).get("watch") or "") for card in cards.values())
    if not any(watch.startswith(SOFT_DELETE_WATCH) for watch in flag) or names_flag(question):
        return None
    asked = " ".join(question.casefold().split())
    drops: list[tuple[Filter, str]] = []
    for node in tree.find_all(exp.EQ, exp.In):
        if isinstance(node, exp.In):
            target, values = node.this, list(node.expressions)
        else:
            target, values = node.args.get("this"), [node.args.get("expression")]
        if not isinstance(target, exp.Column) or target.name.upper() != bare.upper():
            continue
        if qualifier and target.table.upper() != qualifier.upper():
            continue
        if not values or not all(isinstance(v, exp.Literal) for v in values):
            return None
        literals = tuple(str(v.name) for v in values)
        if any(re.search(rf"(?<!\w){re.escape(lit.casefold())}(?!\w)", asked) for lit in literals):
            return None  # the question names the value: the filter is asked for, on a column still to be found
        found = Filter("", target.name, "in" if isinstance(node, exp.In) else "eq", literals, node)
        drops += [(found, literal) for literal in literals]
    left = unfiltered(tree, drops, dialect) if drops else None
    if left is None or any(c.name.upper() == bare.upper() for c in tree.find_all(exp.Column)):
        return None  # the column is still read elsewhere: leaving the filter out does not make the statement run
    return left
