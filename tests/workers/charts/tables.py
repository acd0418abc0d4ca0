"""Result tables the chart tests draw: a year's months of counts, cities' amounts, and shapes that make no chart."""

from __future__ import annotations

from collections.abc import Sequence

from core.answer.model import ResultTable
from core.answer.values import ValueKind

MONTH_COUNTS = [31, 28, 45, 40, 52, 61, 58, 49, 44, 39, 35, 47]  # June 2024 is the highest
CITY_AMOUNTS = {
    "Daegu": 4_000.10,
    "Seoul": 12_345.50,
    "Busan": 8_000.25,
    "Incheon": 9_500.00,
    "Ulsan": 1_200.00,
    "Daejeon": 3_000.00,
    "Gwangju": 2_500.75,
    "Suwon": 7_000.00,
}


def months_2024(*, shuffled: bool = True) -> ResultTable:
    """Orders per month of 2024, the months out of order as a GROUP BY may return them."""
    rows = [[f"2024-{m:02d}-01", MONTH_COUNTS[m - 1]] for m in range(1, 13)]
    if shuffled:
        rows = rows[5:] + rows[:5]
    return ResultTable(database="erp", sql="SELECT ...", columns=["month", "orders"], rows=rows)


def cities() -> ResultTable:
    """Total order amount by city (kinds from the cards: a text city, a DECIMAL(p, 2) amount)."""
    return ResultTable(
        database="erp",
        sql="SELECT ...",
        columns=["city", "total_amount"],
        kinds=[ValueKind.TEXT, ValueKind.AMOUNT],
        rows=[[city, amount] for city, amount in CITY_AMOUNTS.items()],
    )


def table(
    columns: list[str], rows: Sequence[Sequence[object]], kinds: Sequence[ValueKind | None] | None = None
) -> ResultTable:
    """A succeeded result of these columns, rows and (when given) kinds."""
    return ResultTable(
        database="erp", sql="SELECT ...", columns=columns, rows=[list(r) for r in rows], kinds=list(kinds or [])
    )
