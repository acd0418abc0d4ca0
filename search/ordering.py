"""Copies after every live candidate, unless the question names them; a copy is moved, never dropped.

A copy (`backup`, `draft`, `staging`, `snapshot`) has the same columns as its live table, so it often matches a
question as well or better; SQL on it runs and returns a stale number. So a live table takes the best place of
itself and its copies (fetched when search did not retrieve it), and copies follow all live candidates, in that
order; the copies of the first k live tables are listed after them without taking a slot. A question that names
a copy (its name, its marker such as `BAK` or `202312`, or its kind: "backup", "snapshot", "staging copy") puts
that copy first, ahead of its live table (one named by its name or marker ahead of one named by its kind only).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy.orm import Session

from core.store.models import SourceTable
from core.store.repositories import search_queries as queries
from core.text.naming import affixes

COPY_ROLES = frozenset({"backup", "draft", "staging", "snapshot"})
#: Words that name copies of any kind.
COPY_WORDS = frozenset({"copy", "copies", "duplicate", "duplicates", "replica"})
#: Words that name one kind of copy, beside the name markers (`core.text.naming`).
#: Everyday words ("old", "new", "test") are left out: "how old is…" asks for no backup.
KIND_WORDS = {
    "backup": frozenset({"backup", "backups", "archive", "archived"}),
    "staging": frozenset({"staging", "staged", "temporary"}),
    "draft": frozenset({"draft", "drafts"}),
    "snapshot": frozenset({"snapshot", "snapshots"}),
}
#: A period marker names a copy only when it is this precise (`202312`); a year alone is a filter value.
PERIOD_MARKER = 6
_WORD = re.compile(r"[0-9A-Za-z_\u00C0-\uFFFF]+(?:-[0-9]+)?")


def is_copy(row: SourceTable) -> bool:
    return row.role in COPY_ROLES and row.copy_of_id is not None


def _live_of(row: SourceTable) -> int | None:
    return row.copy_of_id if row.role in COPY_ROLES else None


def question_words(question: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(question)}


def copy_named(row: SourceTable, words: set[str]) -> int:
    """How precisely a question with these words asks for this copy: 2 by its name or marker (`ORD_MST_BAK`,
    `202312`), 1 by its kind or as any copy ("backup", "copy"), 0 not at all."""
    if row.name.lower() in words:
        return 2
    for affix in affixes(row.name):
        marker = affix.marker.lower()
        if affix.kind == "period":
            if len(marker) >= PERIOD_MARKER and marker in {w.replace("-", "") for w in words}:
                return 2
        elif marker in words:
            return 2
    if words & COPY_WORDS or words & KIND_WORDS.get(row.role, frozenset()):
        return 1
    return 0


def place_copies(
    session: Session,
    order: list[int],
    rows: dict[int, SourceTable],
    may_see: Callable[[SourceTable], bool],
    question: str = "",
) -> tuple[list[int], list[int]]:
    """The copies the question names first, then live tables (each at the best place of itself and its copies);
    and apart, the other copies, in the order of their live tables."""
    missing = sorted({live for t in order if (live := _live_of(rows[t])) is not None and live not in rows})
    for live_id, row in queries.tables(session, missing).items():
        if row.visible and may_see(row):
            rows[live_id] = row
    words = question_words(question)
    asked = {t: copy_named(rows[t], words) for t in order if _live_of(rows[t]) is not None}
    # the copies the question names by name or marker first, then those named by kind, each in ranking order
    named = sorted((t for t in asked if asked[t]), key=lambda t: -asked[t])
    head: list[int] = list(named)
    tail: list[int] = []
    emitted: set[int] = set(named)
    for table_id in order:
        row = rows[table_id]
        live = _live_of(row)
        if table_id in emitted:
            continue
        if live is not None and live in rows and live not in emitted:
            emitted.add(live)
            head.append(live)
        if table_id in emitted:
            continue
        emitted.add(table_id)
        (tail if live is not None else head).append(table_id)
    position = {t: i for i, t in enumerate(head)}
    tail.sort(key=lambda t: position.get(rows[t].copy_of_id or -1, len(head)))
    return head, tail


def take_slots(head: list[int], tail: list[int], rows: dict[int, SourceTable], k: int) -> list[int]:
    """The first `k` of `head`, then the copies of those tables (they take no slot: a copy is a variant of a table
    already offered, listed so the reader knows it is there); copies of other tables only fill empty slots."""
    taken = head[:k]
    chosen = set(taken)
    riders = [c for c in tail if rows[c].copy_of_id in chosen]
    filling = [c for c in tail if c not in riders][: max(0, k - len(taken))]
    return taken + [c for c in tail if c in riders or c in filling]
