"""Value matching: a question naming a value ("Busan", "CJ Logistics", "VIP") finds the table and column holding it.

Analysis keeps the distinct short text values of each column's bounded profiling sample on the card (`values`,
`catalog.profiling.INDEXED_VALUES` at most) and, for a code column, each code with its meaning (`codes`); indexing
copies them into a full-text index, a code under its meaning. A value matches when every one of its words is in the
question, so "orders shipped to Busan" matches `Busan` but not `Busan Port Office`, and "orders paid by credit card"
matches the payment code `01` of the orders table, whose meaning is "Credit card", beside the code table's label
"Credit card". Of the two, the table holding the code ranks first (`value_ranking`): the question counts orders, and
the code table only spells out what the code means. A column whose codes are a named group ("Product category",
`catalog.code_values`) is kept under that name too, so "which product category has the most products" finds the
products' category code before the code master naming the group. A meaning or a group's name is a signal only for
a reader who may read it on the card (`core.cards.card_view`: not from a table they may not see or read in full).
Values are never a signal for a reader who may not see them: not from a table they may not see, not from a column
masked for them, and, where a row filter applies to a table for them or it is a view over filtered or masked tables
(the sample was read from every row), only when their own SQL finds the value (`core.access.viewer_facts.ViewerReads`,
compared exactly); without that check such a table gives no value signal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.access.viewer_facts import ViewerReads
from core.cards.card_policies import meanings_readable
from core.cards.card_view import codes_visible, group_named, policies_of, rows_differ_for
from core.store.models import SourceTable
from core.store.repositories.search_batch import RankingQuery, rankings
from core.store.repositories.search_values import IndexedValue, ValueHit
from search.query_text import STOPWORDS, stem

#: Value hits read per search; enough for every table a question's values could name.
VALUE_HITS = 200
_TOKEN = re.compile(r"[0-9A-Za-z\u00C0-\uFFFF]+")


@dataclass(frozen=True)
class ValueMatch:
    table_id: int
    column: str
    value: str  # what the column holds: the value, or the code whose meaning the question names ("": `group`)
    meaning: str | None = None  # the code's meaning, or with no value, the name of the column's group of codes

    @property
    def said(self) -> str:
        """The text the question named: the code's meaning or group, or the value itself."""
        return self.meaning or self.value

    @property
    def group(self) -> bool:
        """The question names the group of codes the column holds ("product category"), no one value of it."""
        return not self.value and bool(self.meaning)

    def contract(self) -> dict[str, str]:
        if self.group:
            return {"column": self.column, "group": self.said}
        found = {"column": self.column, "value": self.value}
        return found | {"meaning": self.meaning} if self.meaning is not None else found


def indexed_values(tables: Iterable[tuple[int, dict[str, Any]]]) -> set[IndexedValue]:
    """(table id, column, value, None) for every value kept on the cards of `tables`, (table id, column, code,
    meaning) for every code with a meaning worth matching and (table id, column, "", name) for a column whose codes
    are a named group of a code table (`catalog.code_values`)."""
    wanted: set[IndexedValue] = set()
    for table_id, card in tables:
        for column in card.get("columns", []):
            name = str(column["name"])[:128]
            for value in column.get("values") or []:
                if _letters(str(value)):
                    wanted.add((table_id, name, str(value), None))
            for code in column.get("codes") or []:
                meaning = str(code.get("meaning") or "")
                if _letters(meaning) and meaning.casefold() != str(code.get("code")).casefold():
                    wanted.add((table_id, name, str(code.get("code")), meaning))
            if column.get("codes_group") and _letters(str(column["codes_group"])):
                wanted.add((table_id, name, "", str(column["codes_group"])))
    return wanted


def _letters(value: str) -> bool:
    """A value worth matching has a word of three letters or more that is not a common word."""
    return any(len(w) >= 3 and w.isalpha() and w.lower() not in STOPWORDS for w in _TOKEN.findall(value))


def _tokens(text: str) -> set[str]:
    found: set[str] = set()
    for token in _TOKEN.findall(text.lower()):
        found.update((token, stem(token)))
    return found


def value_query(question: str) -> str | None:
    words = sorted({w for w in _TOKEN.findall(question.lower()) if len(w) >= 3 and w not in STOPWORDS})
    if not words:
        return None
    return " | ".join(f"'{w}'" for w in words)


def value_matches(session: Session, question: str, source_ids: Sequence[int]) -> dict[int, list[ValueMatch]]:
    """Values the question names, per table (filter them with `visible_matches` before use); a search reads them
    with its rankings and calls `matches_in`."""
    query = value_query(question)
    if query is None or not source_ids:
        return {}
    return matches_in(question, rankings(session, RankingQuery(source_ids, 0, values=(query, VALUE_HITS))).values)


def matches_in(question: str, hits: Sequence[ValueHit]) -> dict[int, list[ValueMatch]]:
    """Values the question names, per table, from the value index's hits for `value_query(question)`."""
    asked = _tokens(question)
    found: dict[int, list[ValueMatch]] = {}
    for hit in hits:
        words = {w.lower() for w in _TOKEN.findall(hit.meaning or hit.value)}
        if not words or not words <= asked:
            continue
        found.setdefault(hit.table_id, []).append(ValueMatch(hit.table_id, hit.column, hit.value, hit.meaning))
    return found


def value_ranking(values: dict[int, list[ValueMatch]]) -> list[int]:
    """The tables holding values the question names, best first: the longest text named first; of equal ones, a
    table whose matches only spell out what codes of another matched table mean (a code table's "Credit card"
    beside the orders' payment code meaning it) after that table; then the table naming more values."""

    coded: dict[str, set[int]] = {}  # a meaning named → the tables holding a code with it
    for table_id, found in values.items():
        for m in found:
            if m.meaning:
                coded.setdefault(m.meaning.casefold(), set()).add(table_id)

    def spells_out_codes(table_id: int) -> bool:
        return all(
            m.meaning is None and bool(coded.get(m.value.casefold(), set()) - {table_id}) for m in values[table_id]
        )

    return sorted(values, key=lambda t: (-max(len(m.said) for m in values[t]), spells_out_codes(t), -len(values[t]), t))


def visible_matches(
    principal: Principal,
    matches: dict[int, list[ValueMatch]],
    rows: dict[int, SourceTable],
    names: dict[int, str],
    reads: ViewerReads | None = None,
) -> dict[int, list[ValueMatch]]:
    """The matches on tables and columns the principal may see, of values their own reads hold (module doc)."""
    shown: dict[int, list[ValueMatch]] = {}
    for table_id, found in matches.items():
        row = rows.get(table_id)
        if row is None or not row.visible:
            continue
        database = names[row.source_id]
        schema = row.schema_name or None
        if not principal.may_see_table(database, row):
            continue
        masks = principal.column_masks(database, row.name, [m.column for m in found], schema)
        kept = [m for m in found if masks.get(m.column) is None]
        if any(m.meaning is not None for m in kept):
            kept = _meanings_readable(principal, database, row, kept)
        if kept and rows_differ_for(principal, database, row):
            kept = [] if reads is None else _held(reads, database, row, kept)
        if kept:
            shown[table_id] = sorted(kept, key=lambda m: -len(m.said))
    return shown


def _meanings_readable(
    principal: Principal, database: str, row: SourceTable, matches: list[ValueMatch]
) -> list[ValueMatch]:
    """`matches` without the meanings and group names the principal may not read on the card of `row`
    (`core.cards.card_view`: those read from a table they may not see, or do not read in full, are left out)."""
    if principal.operator:
        return matches
    columns = {str(c.get("name")): c for c in (row.card or {}).get("columns") or []}
    policies = policies_of(principal, database)

    def may_see(schema: str | None, name: str) -> bool:
        return principal.may_see(database, name, schema)

    def readable(match: ValueMatch) -> bool:
        column = columns.get(match.column)
        if column is None or not codes_visible(column, may_see):
            return False
        if policies is not None and not meanings_readable(column, policies):
            return False
        return not match.group or "codes_group" in group_named(dict(column), may_see, policies)

    return [m for m in matches if m.meaning is None or readable(m)]


def _held(reads: ViewerReads, database: str, row: SourceTable, matches: list[ValueMatch]) -> list[ValueMatch]:
    by_column: dict[str, list[ValueMatch]] = {}
    for match in matches:
        if not match.group:
            by_column.setdefault(match.column, []).append(match)
    kept = [m for m in matches if m.group]  # the name of a column's codes, not a value its rows hold
    for column, found in by_column.items():
        present = reads.values_present(database, row, column, [m.value for m in found])
        kept += [m for m in found if m.value in present]
    return kept
