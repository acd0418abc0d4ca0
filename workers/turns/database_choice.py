"""Which database a question is about, when nothing is pinned and the question names none (`workers.turns.selection`).

A database is ranked by its best `DATABASE_TABLES` candidates' summed scores. A question needs several tables of one
database, so the sum of each database's best two or three could seem the better rule; measured on Spider dev, BIRD
dev and BEAVER-NW (bench.database_choice, leaving one set out), it won on BIRD and lost on the other two: the
database of the best candidate alone is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from search.candidates import Candidate

#: A database is ranked by the summed scores of its best this-many candidates (1: by its best candidate alone).
#: Chosen leaving one set out on the database-choice benchmark (bench.database_choice).
DATABASE_TABLES = 1


def databases_ranked(candidates: Sequence[Candidate]) -> list[str]:
    """The databases of `candidates` (in rank order), strongest first; ties keep the order of their best
    candidates."""
    scores: dict[str, list[float]] = {}
    for candidate in candidates:
        scores.setdefault(candidate.database, []).append(candidate.score)
    if DATABASE_TABLES <= 1:
        return list(scores)
    strength = {d: sum(sorted(s, reverse=True)[:DATABASE_TABLES]) for d, s in scores.items()}
    return sorted(scores, key=lambda d: -strength[d])
