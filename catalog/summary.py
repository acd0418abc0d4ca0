"""The database summary analysis stores (under 600 characters), from what the cards show
(`core.cards.database_summary`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.cards.database_summary import SummaryTable, summary_text


def _rows(card: dict[str, Any]) -> int:
    value = card.get("row_count")
    return value if isinstance(value, int) else 0


def summarise(database: str, engine: str, cards: Sequence[dict[str, Any]]) -> str:
    return summary_text(
        database,
        engine,
        [
            SummaryTable(
                name=str(c["table"]),
                role=str(c["role"]),
                copy=bool(c.get("copy_of")),
                rows=_rows(c),
                referenced_by=len(c.get("referenced_by") or []),
            )
            for c in cards
        ],
    )
