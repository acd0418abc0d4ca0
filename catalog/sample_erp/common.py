"""Shared row types and deterministic random helpers used by the row generators."""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import itertools
import random
from collections.abc import Sequence
from decimal import Decimal
from typing import Generic, TypeVar

Row = dict[str, object]
TableRows = dict[str, list[Row]]

T = TypeVar("T")


def rng_for(seed: int, label: str) -> random.Random:
    """A generator for one part of the data, so that changing one part does not reshuffle every other part.

    String seeds are hashed with SHA-512 by ``random``, independent of PYTHONHASHSEED.
    """
    return random.Random(f"tablescout-sample-erp/{seed}/{label}")


@functools.lru_cache(maxsize=65_536)
def krw(amount: int) -> Decimal:
    """An integer KRW amount as the Decimal stored in Numeric(14, 2) columns (Decimals are immutable: cached)."""
    return Decimal(amount).quantize(Decimal("0.01"))


def round_to(value: float, step: int) -> int:
    """Round a price to the nearest ``step`` won, never below one step."""
    return max(step, round(value / step) * step)


class Weighted(Generic[T]):
    """A fixed list of choices with positive weights, sampled with a precomputed cumulative table."""

    def __init__(self, items: Sequence[T], weights: Sequence[float]) -> None:
        if len(items) != len(weights) or not items or min(weights) <= 0:
            raise ValueError("need the same non-zero number of items and positive weights")
        self._items = list(items)
        self._cum = list(itertools.accumulate(weights))

    def _index(self, rng: random.Random) -> int:
        # min() guards against r * total rounding up to total itself.
        return min(bisect.bisect_right(self._cum, rng.random() * self._cum[-1]), len(self._cum) - 1)

    def pick(self, rng: random.Random) -> T:
        """One item, chance proportional to its weight."""
        return self._items[self._index(rng)]

    def pick_distinct(self, rng: random.Random, count: int) -> list[T]:
        """Up to ``count`` different items (fewer only when the list is shorter), in the order drawn."""
        count = min(count, len(self._items))
        chosen: list[T] = []
        seen: set[int] = set()
        while len(chosen) < count:
            index = self._index(rng)
            if index not in seen:
                seen.add(index)
                chosen.append(self._items[index])
        return chosen


def random_date(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    """A uniformly drawn day between ``start`` and ``end`` inclusive."""
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def at_time(day: dt.date, seconds: int) -> dt.datetime:
    """``day`` at ``seconds`` after midnight, whole seconds only (MariaDB DATETIME keeps no fraction)."""
    return dt.datetime.combine(day, dt.time()) + dt.timedelta(seconds=seconds)


def month_start(day: dt.date) -> dt.date:
    """First day of ``day``'s month."""
    return day.replace(day=1)


def next_month(day: dt.date) -> dt.date:
    """First day of the month after ``day``'s month."""
    return (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
