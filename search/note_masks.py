"""Notes that would show a masked column: a note is written by people and may quote the very values a column mask
keeps from a reader ("VIP customers are the ones with GRADE_CD = 'P1'"). A note attached to a table is not shown
to a reader for whom one of that table's columns is masked when the note names that column, or quotes one of the
column's values analysis recorded (frequent values, codes, range ends). Short values (under three characters)
are not looked for: they occur in ordinary words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from core.access.permissions import Principal
from core.store.models import SourceTable

MIN_VALUE_CHARS = 3
_WORD = re.compile(r"[A-Za-z0-9_$#]+")


def _recorded_values(column: dict[str, Any]) -> Iterator[str]:
    for pair in column.get("frequent") or []:
        if isinstance(pair, list | tuple) and pair:
            yield str(pair[0])
    for code in column.get("codes") or []:
        if isinstance(code, dict):
            yield str(code.get("code", ""))
            if code.get("meaning"):
                yield str(code["meaning"])
    stats = column.get("stats") or {}
    if isinstance(stats, dict):
        for key in ("min", "max"):
            if stats.get(key) is not None:
                yield str(stats[key])


def reveals_masked(principal: Principal, database: str, table: SourceTable, text: str) -> bool:
    """Does note `text`, attached to `table`, name or quote a column of it that is masked for `principal`?"""
    schema = table.schema_name or None
    if not principal.may_mask(database, table.name, schema):
        return False
    columns = [c for c in (table.card or {}).get("columns") or [] if isinstance(c, dict) and c.get("name")]
    masks = principal.column_masks(database, table.name, [str(c["name"]) for c in columns], schema)
    if not masks:
        return False
    words = {w.casefold() for w in _WORD.findall(text)}
    folded = text.casefold()
    for column in columns:
        if str(column["name"]) not in masks:
            continue
        if str(column["name"]).casefold() in words:
            return True
        for value in _recorded_values(column):
            value = value.strip().casefold()
            if len(value) >= MIN_VALUE_CHARS and value in folded:
                return True
    return False
