"""Which databases a question searches: every pinned one, or those whose summaries are close to the question."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from search.query_text import words

MARGIN = 0.12  # a database this much less relevant (cosine) than the best one is skipped


@dataclass(frozen=True)
class SourceChoice:
    source_id: int
    name: str
    summary: str | None
    summary_embedding: Sequence[float] | None


def _overlap(question: str, summary: str | None) -> float:
    asked = set(words(question))
    if not asked or not summary:
        return 0.0
    return len(asked & set(words(summary))) / len(asked)


def select_databases(
    question_vector: np.ndarray,
    question: str,
    choices: Sequence[SourceChoice],
    best_chunk: dict[int, float] | None = None,
    margin: float = MARGIN,
) -> list[SourceChoice]:
    """The choices worth searching, most relevant first; all of them when relevance cannot be told apart.

    A database's relevance is the similarity of its summary to the question, or of its best-matching chunk when
    that is higher: a summary cannot name every column, and a question may be about one deep in a wide table.
    """
    if len(choices) <= 1:
        return list(choices)
    chunk = best_chunk or {}
    if all(c.summary_embedding is not None for c in choices):
        scores = [
            max(float(np.dot(question_vector, np.asarray(c.summary_embedding))), chunk.get(c.source_id, -1.0))
            for c in choices
        ]
    else:
        scores = [_overlap(question, c.summary) for c in choices]
        margin = 1.0 if max(scores) == 0 else margin
    best = max(scores)
    ranked = sorted(zip(scores, range(len(choices)), strict=True), reverse=True)
    return [choices[i] for score, i in ranked if score >= best - margin]
