"""What the answer says about a filter on an active or soft-delete flag that the question does not name (SPEC §4,
guided path).

The card of a flag column (`USE_YN`, `IS_DELETED`, `ACTIVE`) tells the model that current rows need a filter on it
(`catalog.misuse`), so a statement for "How many customers are registered?" may count the active ones only. That is
often what is meant, and sometimes not: the answer says which rows it kept, in one line, so the reader can ask for
every row. A question that names the flag itself ("active customers", "deleted products", the column's own words)
gets no line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from catalog.misuse import SOFT_DELETE_WATCH
from workers.turns.answer_checks import parse
from workers.turns.code_meanings import words
from workers.turns.statement_filters import card_column, filters

#: Words with which a question names a flag's rows itself (English and Korean).
_FLAG_WORDS = re.compile(
    r"\b(active|inactive|deleted|removed|current|valid|invalid|enabled|disabled|in use|discontinued)\b|"
    r"사용|삭제|활성|유효",
    re.IGNORECASE,
)


def names_flag(question: str) -> bool:
    """Does the question name a flag's rows itself ("active customers", "deleted products", "사용 중")?"""
    return _FLAG_WORDS.search(question) is not None


def flag_notes(question: str, sql: str, dialect: str | None, cards: Mapping[str, dict[str, Any]]) -> list[str]:
    """One line for each equality of `sql` on a flag column whose card marks it as an active or soft-delete flag,
    when the question does not name the flag; `cards`: the cards of the tables the statement could read, by
    upper-case name."""
    tree = parse(sql, dialect)
    if tree is None or _FLAG_WORDS.search(question):
        return []
    said = words(question)
    notes = []
    for f in filters(tree, dict(cards)):
        column = card_column(cards[f.table], f.column)
        if f.op != "eq" or not str(column.get("watch") or "").startswith(SOFT_DELETE_WATCH):
            continue
        if {w for w in re.split(r"[^a-z0-9]+", f.column.lower()) if len(w) >= 3} & said:
            continue  # the question says the column's own words
        table = str(cards[f.table].get("table") or f.table)
        notes.append(
            f"I kept only the rows where {table}.{f.column} = '{f.literals[0]}' (the table's active or deleted "
            "flag), which the question does not name; say if you meant every row."
        )
    return notes
