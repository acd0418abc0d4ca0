"""Families of near-twin tables: one place in the ranking for a table and its variants.

Warehouses keep several tables of one shape: a table and its history, shadow or archive table
(`instances`, `shadow_instances`; `X_BUILDING`, `X_BUILDING_HIST`), and the same table in another subject area
(`X_BUILDING`, `Y_BUILDING`). They match a question equally well and crowd out the other tables it needs. Two
ranked tables of one database are twins when nearly all the column names of the narrower are the other's (a share
of at least `TWIN_COLUMNS`) and their names differ by affixes only: one name's words hold all of the other's, or
each has one word the other lacks. A family is the twins linked together. Its place is that of its best-ranked
member, taken by its base table (the member whose name's words the best-ranked one's hold, as `instances` for
`shadow_instances`) or else by the best-ranked member itself; the others follow the first `DEFER_AT` places.
A question may ask for variants (a word of the member's name that the base's lacks is in the question: "history",
"archived", "2023"): then the best of those leads the family, and they and the base keep their places.

Copies judged at analysis (backups, snapshots, drafts, staging tables) are placed by `search.ordering` and are left
alone here. Tables the
reader sees otherwise than stored (hidden columns) are never grouped, so what is hidden from the reader does not
move anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from core.store.models import SourceTable
from core.text.name_words import default_name_words

#: How many of the best-ranked tables are grouped into families (the rest keep their order).
WINDOW = 60
#: The share of the narrower table's column names the other must have for two tables of like names to be twins (a
#: history table adds its validity columns to its table's).
TWIN_COLUMNS = 0.8
#: Twins share at least this many column names (two tables of a key and a name say nothing of each other).
MIN_SHARED = 3
#: The places before which a family has one member (the others follow them), unless the question asks for them.
DEFER_AT = 30
#: A question word asks for a name's word when one starts with the other and the shorter has this many letters.
PREFIX_LETTERS = 3


@dataclass(frozen=True)
class Families:
    order: list[int]
    family_of: dict[int, int]  # a deferred member → the family's first member


def _name_words(name: str) -> frozenset[str]:
    return frozenset(w for w in default_name_words().split(name) if w)


def _names_twin(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return False
    if a <= b or b <= a:
        return True
    return len(a - b) == 1 and len(b - a) == 1 and bool(a & b)


def _columns_twin(a: frozenset[str], b: frozenset[str]) -> bool:
    shared = len(a & b)
    return shared >= MIN_SHARED and shared >= TWIN_COLUMNS * min(len(a), len(b))


def _asked(word: str, question: set[str]) -> bool:
    for asked in question:
        shorter = min(len(word), len(asked))
        if shorter >= PREFIX_LETTERS and (asked.startswith(word) or word.startswith(asked)):
            return True
        if word == asked:
            return True
    return False


def group(
    order: Sequence[int],
    rows: Mapping[int, SourceTable],
    columns: Mapping[int, frozenset[str]],
    question_words: set[str],
    groupable: Callable[[int], bool],
) -> Families:
    """`order` with each family's later members after the first DEFER_AT places (their relative order kept)."""
    window = [t for t in order[:WINDOW] if groupable(t) and columns.get(t)]
    words = {t: _name_words(rows[t].name) for t in window}
    source = {t: rows[t].source_id for t in window}  # read once: the pairs below read it 3,600 times
    parent: dict[int, int] = {t: t for t in window}

    def find(t: int) -> int:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    for i, a in enumerate(window):
        for b in window[i + 1 :]:
            if source[a] != source[b] or find(a) == find(b):
                continue
            if _names_twin(words[a], words[b]) and _columns_twin(columns[a], columns[b]):
                parent[find(b)] = find(a)  # the better-ranked table's family
    members: dict[int, list[int]] = {}
    for table_id in window:
        members.setdefault(find(table_id), []).append(table_id)
    heads: dict[int, int] = {}  # the family's best-ranked member → the member that takes its place
    family_of: dict[int, int] = {}
    for family in members.values():
        if len(family) < 2:
            continue
        best = family[0]
        base = min(family, key=lambda t: len(words[t]))
        asked = [t for t in family if t != base and any(_asked(w, question_words) for w in words[t] - words[base])]
        if asked:  # the question asks for these variants: the best of them leads, the base keeps its own place
            head, stay = asked[0], {*asked, base}
        else:
            head = base if words[base] < words[best] else best
            stay = {head}
        heads[best] = head
        for table_id in family:
            if table_id not in stay:
                family_of[table_id] = head
    if not family_of and all(h == b for b, h in heads.items()):
        return Families(list(order), {})
    placed: list[int] = []
    for table_id in order:
        if table_id in heads:
            placed.append(heads[table_id])  # the family's place goes to its head
        if table_id not in family_of:
            placed.append(table_id)
    kept = list(dict.fromkeys(placed))
    deferred = [t for t in order if t in family_of]
    return Families(kept[:DEFER_AT] + deferred + kept[DEFER_AT:], family_of)
