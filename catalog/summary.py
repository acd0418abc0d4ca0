"""A database summary (under 600 characters) from what the cards show: what business data the database holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.naming import humanise

LIMIT = 600


def _rows(card: dict[str, Any]) -> int:
    value = card.get("row_count")
    return value if isinstance(value, int) else 0


def summarise(database: str, engine: str, cards: Sequence[dict[str, Any]]) -> str:
    live = [c for c in cards if c["role"] in ("live", "partition", "log", "view")]
    copies = [c["table"] for c in cards if c.get("copy_of")]
    partitions = [c["table"] for c in cards if c["role"] == "partition"]
    total_rows = sum(_rows(c) for c in cards if not c.get("copy_of"))
    main = sorted((c for c in live if c["role"] == "live"), key=lambda c: (-len(c.get("referenced_by", [])), -_rows(c)))
    head = f"{database} ({engine}): {len(cards)} tables, about {total_rows:,} rows."
    tail = []
    if copies:
        tail.append(f" Stale copies: {', '.join(copies)}.")
    if partitions:
        tail.append(f" Partitions: {', '.join(partitions)}.")
    budget = LIMIT - len(head) - sum(len(t) for t in tail) - 12
    described: list[str] = []
    for card in main:
        item = f"{humanise(card['table'])} ({card['table']}, {_rows(card):,})"
        if sum(len(d) + 2 for d in described) + len(item) > budget:
            break
        described.append(item)
    body = f" Holds {'; '.join(described)}." if described else ""
    text = head + body + "".join(tail)
    if len(text) > LIMIT:
        text = text[: LIMIT - 3].rstrip() + "..."
    return text
