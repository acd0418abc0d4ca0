"""Turning what a turn did into what it says: the final answer, an honest partial answer, JSON-safe results."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from core.text.storable_text import storable
from workers.tools.base import SqlRecord, ToolContext


def json_value(value: Any) -> Any:
    """A result cell as JSON: exact integers stay integers, other decimals become floats, dates ISO text; text is
    storable (a database value may hold a NUL character, which the store refuses)."""
    if isinstance(value, str):
        return storable(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    return storable(str(value))


def sql_json(record: SqlRecord) -> dict[str, Any]:
    return {
        "database": record.database,
        "sql": storable(record.sql),
        "columns": [storable(c) for c in record.columns],
        "rows": [[json_value(v) for v in row] for row in record.rows],
        "truncated": record.truncated,
        "error": storable(record.error) if record.error is not None else None,
    }


def partial_answer(reason: str, last_text: str, context: ToolContext) -> str:
    """What the turn found before it had to stop, said plainly; never presented as a complete answer."""
    parts = [f"I could not finish this answer: {reason}."]
    if last_text.strip():
        parts.append(f"Where I got to: {last_text.strip()}")
    if context.opened:
        parts.append("Tables I looked at: " + ", ".join(f"{d}.{t}" for d, t in sorted(context.opened)) + ".")
    good = [r for r in context.sql_runs if r.error is None]
    if good:
        last = good[-1]
        parts.append(f"The last SQL that ran on {last.database} returned {len(last.rows)} row(s): {last.sql}")
    parts.append("Please ask again, perhaps more narrowly.")
    return "\n".join(parts)


#: Numbers in an answer, as written ("4,750", "3691987750.5", "12.3"): digits with thousands separators and decimals.
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
#: Numbers below this may appear in an answer without a source ("2 tables", "the top 3").
FREE_BELOW = 10
#: How far an answer's number may be from a returned one and still be that number, rounded.
ROUNDING = 0.005


def numbers_in(text: str) -> list[float]:
    return [float(match.replace(",", "")) for match in _NUMBER.findall(text)]


def unsupported_numbers(answer: str, sources: Sequence[str]) -> list[str]:
    """The numbers of `answer` (10 or more) that appear in none of `sources` (the question and the tool results),
    exactly or rounded: the numbers a small model made up rather than read."""
    known = [n for text in sources for n in numbers_in(text)]
    missing = []
    for match in _NUMBER.findall(answer):
        value = float(match.replace(",", ""))
        if value < FREE_BELOW:
            continue
        if not any(abs(value - k) <= ROUNDING * max(abs(k), 1.0) for k in known):
            missing.append(match)
    return missing
