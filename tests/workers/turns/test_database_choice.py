"""The database a question is about when nothing is pinned (`workers.turns.database_choice`): by the best candidate,
or by the summed scores of each database's best few at another value of the constant (as bench.database_choice
measures)."""

from __future__ import annotations

import pytest

import workers.turns.database_choice as database_choice
from search.candidates import Candidate


def candidate(database: str, table: str, score: float) -> Candidate:
    return Candidate(database, None, table, score, "live", None, "", "sqlite", ["keyword"])


RANKED = [
    candidate("billing", "BILL_CUST", 0.0397),
    candidate("erp", "CUST_MST", 0.0380),
    candidate("erp", "ORD_MST", 0.0374),
    candidate("billing", "INV_HDR", 0.0300),
    candidate("hr", "EMP_MST", 0.0100),
]


def test_the_database_of_the_best_candidate_comes_first_as_shipped() -> None:
    assert database_choice.DATABASE_TABLES == 1
    assert database_choice.databases_ranked(RANKED) == ["billing", "erp", "hr"]
    assert database_choice.databases_ranked([]) == []


def test_summed_scores_of_each_databases_best_candidates_rank_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database_choice, "DATABASE_TABLES", 2)
    assert database_choice.databases_ranked(RANKED) == ["erp", "billing", "hr"]
    monkeypatch.setattr(database_choice, "DATABASE_TABLES", 3)
    # a third table of erp scores nothing more; billing's two still trail erp's two
    assert database_choice.databases_ranked(RANKED) == ["erp", "billing", "hr"]
