"""Reciprocal rank fusion of per-table rankings (Cormack, Clarke and Büttcher, 2009)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RRF_K = 60


def best_first(hits: Iterable[tuple[int, float]]) -> list[int]:
    """Table ids in order of their best chunk: a table appears once, where its best chunk ranked."""
    order: list[int] = []
    seen: set[int] = set()
    for table_id, _ in sorted(hits, key=lambda h: -h[1]):
        if table_id not in seen:
            seen.add(table_id)
            order.append(table_id)
    return order


def reciprocal_rank_fusion(rankings: Sequence[tuple[list[int], float]], k: int = RRF_K) -> dict[int, float]:
    """Sum of weight / (k + rank) over the rankings each table appears in (rank starts at 1)."""
    scores: dict[int, float] = {}
    for ranking, weight in rankings:
        for rank, table_id in enumerate(ranking, start=1):
            scores[table_id] = scores.get(table_id, 0.0) + weight / (k + rank)
    return scores
