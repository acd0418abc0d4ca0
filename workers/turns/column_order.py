"""A wide result's columns in the order a reader looks for them: the columns the question names first (SPEC §8).

A surface shows the first columns of a wide result (a Teams card six, a Slack table a few more) and the rest in
the CSV, so `SELECT *` or a join's many columns would put keys and audit columns where the asked-for ones belong.
When a result has more than `WIDE` columns, the columns whose names share a word with the question move to the
front, in the order the question names them; the others keep the statement's order after them. Words are matched
on the column name's parts (`SHIP_CITY`, `shipCity`, `ship city`), singular or plural, and a part that starts a
question word ("CUST" of "customers"); parts shorter than three letters ("NO", "ID") match nothing. The rows, the
kinds and the CSV follow the same order; the statement is left as it ran.
"""

from __future__ import annotations

import re

from core.answer.model import ResultTable

#: More columns than this and the question's columns go first.
WIDE = 6
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[\uac00-\ud7a3]+")
_WORDS = re.compile(r"[A-Za-z]+|[\uac00-\ud7a3]+")
#: The shortest column-name part that may match ("NO", "ID" and "TO" name no question's subject).
_SHORTEST = 3


def question_columns_first(table: ResultTable, question: str) -> ResultTable:
    """`table` with the columns the question names first, when it is wide; otherwise `table` itself."""
    if len(table.columns) <= WIDE or not table.succeeded:
        return table
    words = [_stem(w) for w in _WORDS.findall(question.lower())]
    named = [(at, i) for i, c in enumerate(table.columns) if (at := _named_at(c, words)) is not None]
    if not named:
        return table
    first = [i for _, i in sorted(named)]
    order = first + [i for i in range(len(table.columns)) if i not in first]
    if order == list(range(len(table.columns))):
        return table
    kinds = [table.kinds[i] if i < len(table.kinds) else None for i in order] if table.kinds else []
    return table.model_copy(
        update={
            "columns": [table.columns[i] for i in order],
            "kinds": kinds,
            "rows": [[row[i] for i in order] for row in table.rows],
        }
    )


def _named_at(column: str, words: list[str]) -> int | None:
    """Where the question first names one of `column`'s parts (the word's position), or None."""
    parts = [_stem(p.lower()) for p in _PARTS.findall(column.split(".")[-1])]
    found = [
        at
        for at, word in enumerate(words)
        for part in parts
        if len(part) >= _SHORTEST and (part == word or word.startswith(part))
    ]
    return min(found) if found else None


def _stem(word: str) -> str:
    """A word without its plural ending, so "cities" meets "CITY" and "orders" meets "ORDER"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word
