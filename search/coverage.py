"""Coverage of what the question asks for: each of its parts gets a candidate in the first places before any part
gets a second.

A question that lists many things ("the building's street address, city and postal code of the history
department") needs a table for each, and the fused ranking rewards the tables that match the most words, which are
often variants of one thing. The parts are the question's phrases (`search.decomposition`), each ranked by meaning
and by words on its own; a table covers a part when it is among the best of that ranking that match the part by
words (a phrase no table names, such as "provide information", covers nothing and moves nothing). The first places
are one for the question's best candidate and one per part; a part that none of them covers gets its best table
into them, in the order of the fused ranking, ahead of the fused order's last ones there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from search.fusion import reciprocal_rank_fusion

#: A table covers a part when it is among this many best of the part's own ranking (and matches it by words).
COVER_DEPTH = 3


@dataclass(frozen=True)
class PartRanking:
    """One part of the question with its rankings: by meaning (may be empty) and by words."""

    text: str
    semantic: list[int]
    keyword: list[int]

    def ranked(self, usable: set[int]) -> list[int]:
        """The part's fused ranking over the usable tables that match it by words."""
        fused = reciprocal_rank_fusion([(self.semantic, 1.0), (self.keyword, 1.0)])
        named = set(self.keyword)
        return [t for t in sorted(fused, key=lambda t: (-fused[t], t)) if t in usable and t in named]


@dataclass
class Coverage:
    order: list[int]
    covers: dict[int, list[str]] = field(default_factory=dict)  # table → the parts it covers
    firsts: list[int] = field(default_factory=list)  # each covered part's best table


def cover(order: Sequence[int], parts: Sequence[PartRanking], deferred: set[int]) -> Coverage:
    """`order` with a table for each part among its first places: a part none of the first places covers gets its
    best table right after them, before any part gets a second (tables in `deferred` cover nothing). Also, for
    every table, the parts it is among the COVER_DEPTH best of."""
    usable = {t for t in order if t not in deferred}
    covers: dict[int, list[str]] = {}
    firsts: list[int] = []
    ranked_parts = []
    for part in parts:
        ranked = part.ranked(usable)
        for table_id in ranked[:COVER_DEPTH]:
            covers.setdefault(table_id, []).append(part.text)
        if ranked:
            firsts.append(ranked[0])
            ranked_parts.append(ranked[:COVER_DEPTH])
    if not order or not firsts:
        return Coverage(list(order), covers, firsts)
    lead_size = 1 + len(ranked_parts)  # the first candidate, and one place per covered part
    lead = list(order[:lead_size])
    missing = [ranked[0] for ranked in ranked_parts if not set(ranked) & set(lead)]
    position = {t: i for i, t in enumerate(order)}
    pulled = sorted(dict.fromkeys(t for t in missing if t not in lead), key=position.__getitem__)
    if not pulled:
        return Coverage(list(order), covers, firsts)
    head = [*order[: lead_size - len(pulled)], *pulled] if len(pulled) < lead_size else [order[0], *pulled]
    return Coverage(head + [t for t in order if t not in set(head)], covers, firsts)


def depth(order: Sequence[int], needed: set[int], k: int, most: int) -> int:
    """How many of `order` to hand over: at least `k`, and as far as the last `needed` table (each part's best
    table, the connectors between candidates), but never more than `most`."""
    last = max((i + 1 for i, t in enumerate(order) if t in needed), default=0)
    return max(k, min(most, last))
