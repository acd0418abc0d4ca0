"""SQL on a stale copy runs fine and returns a wrong number, so run_sql refuses a copy unless the user asked
about that copy: named it, used its marker ("BAK", "202312") or its kind ("backup", "snapshot").

A month alone ("orders in December 2023") is not asking about the December 2023 snapshot: the live table holds
those orders too, and more correctly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from catalog.naming import COPY_ROLE_BY_WORD, affixes

ROLE_WORDS = {
    "backup": ("backup", "back-up", "back up", "bak"),
    "snapshot": ("snapshot",),
    "staging": ("staging", "temporary", "temp table", "working copy", "tmp"),
    "draft": ("draft", "test copy", "test table"),
}


def mentions(texts: Sequence[str], table: str, role: str) -> bool:
    """Does anything the user wrote ask about the copy `table` (of role `role`)?"""
    said = " ".join(texts).lower()
    if re.search(rf"(?<![a-z0-9_]){re.escape(table.lower())}(?![a-z0-9_])", said):
        return True
    phrases = [a.marker.lower() for a in affixes(table) if a.kind == "period" or a.marker.lower() in COPY_ROLE_BY_WORD]
    phrases += ROLE_WORDS.get(role, ())
    return any(re.search(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])", said) for p in phrases)
