"""Database identifiers as words: `CUST_STAT_CD` → cust stat cd, `orderDate` → order date.

Used by analysis (names, purposes, copy detection) and by search (full-text over split identifiers), so both
sides split the same way.
"""

from __future__ import annotations

import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^0-9A-Za-z\u00C0-\uFFFF]+")
_DIGIT_EDGE = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")


def split_identifier(name: str) -> list[str]:
    """Lower-case words of an identifier, splitting on separators, camelCase and letter/digit edges."""
    words: list[str] = []
    for part in _SEPARATORS.split(name):
        if not part:
            continue
        for piece in _CAMEL.split(part):
            words.extend(w.lower() for w in _DIGIT_EDGE.split(piece) if w)
    return words


def identifier_text(name: str) -> str:
    """The identifier followed by its words, for indexing: `CUST_STAT_CD cust stat cd`."""
    words = " ".join(split_identifier(name))
    return f"{name} {words}" if words and words != name.lower() else name
