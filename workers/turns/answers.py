"""Turning what a turn did into what it says: the final answer, an honest partial answer, JSON-safe results."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from workers.tools.base import SqlRecord, ToolContext


def json_value(value: Any) -> Any:
    """A result cell as JSON: exact integers stay integers, other decimals become floats, dates ISO text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    return str(value)


def sql_json(record: SqlRecord) -> dict[str, Any]:
    return {
        "database": record.database,
        "sql": record.sql,
        "columns": record.columns,
        "rows": [[json_value(v) for v in row] for row in record.rows],
        "truncated": record.truncated,
        "error": record.error,
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
