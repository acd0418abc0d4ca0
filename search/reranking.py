"""Reranking the head of a search's fused order by the reranker's relevance of each table's card head and notes to
the question."""

from __future__ import annotations

from search.encoders import Reranker
from search.viewer_cards import ViewerCards

#: How many of the first tables the reranker reorders.
RERANK_DEPTH = 20


def rerank(
    reranker: Reranker,
    question: str,
    order: list[int],
    cards: ViewerCards,
    note_texts: dict[int, list[str]],
    scores: dict[int, float],
) -> tuple[list[int], dict[int, float]]:
    """Reorder the head of the list by relevance of card head plus notes to the question: (the new order, the
    scores with each reranked table's relevance in place of its fused score). `scores` itself is not changed."""
    head, rest = order[:RERANK_DEPTH], order[RERANK_DEPTH:]
    documents = []
    for table_id in head:
        documents.append("\n".join([cards.head(table_id), *note_texts.get(table_id, [])]))
    relevance = reranker.score(question, documents)
    ranked = sorted(zip(relevance, head, strict=True), key=lambda p: -p[0])
    new_scores = dict(scores)
    for value, table_id in ranked:
        new_scores[table_id] = round(float(value), 6)
    return [t for _, t in ranked] + rest, new_scores
