"""A table search's request and answer (SPEC §3): what a caller asks for, the encoders it searches with, what
comes back, and the checks a request must pass before anything is read.

`search.service` re-exports these names: callers take them from the search API together with `search_tables`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.errors import TablescoutError
from search.candidates import Candidate
from search.decomposition import Part
from search.encoders import Embedder, Reranker
from search.examples import ExampleHit
from search.limits import MAX_K

DEFAULT_K = 8
ALL_SIGNALS = frozenset({"semantic", "keyword", "note"})


class SearchInputError(TablescoutError):
    """The search request itself is wrong (empty question, k out of range, unknown database)."""


@dataclass
class SearchRequest:
    question: str
    databases: Sequence[str] = ()
    terms: Sequence[str] = ()
    k: int = DEFAULT_K
    signals: frozenset[str] = ALL_SIGNALS
    select_databases: bool = True
    rerank: bool = True
    expand_joins: bool = True
    values: bool = True
    decompose: bool = True
    bm25: bool = True  # the keyword ranking: each table's best chunk by BM25 (False: by ts_rank_cd)
    families: bool = True  # one place for a table and its near-twins (`search.families`)
    coverage: bool = True  # a candidate for each part of the question first (`search.coverage`)
    #: Hand over more than k candidates, up to k + ADAPTIVE_EXTRA (`search.service`), when the question's parts and
    #: the connectors between its candidates need them (a turn's search; the command line's `-k` stays exact).
    adaptive: bool = False


@dataclass
class Searched:
    databases: list[str]
    total: int

    def describe(self) -> str:
        return f"searched {len(self.databases)} of {self.total} databases"


@dataclass
class SearchResult:
    searched: Searched
    candidates: list[Candidate] = field(default_factory=list)
    denied_tables: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)  # what the question mentions (`search.decomposition`)
    examples: list[ExampleHit] = field(default_factory=list)  # approved examples near the question, nearest first


@dataclass
class Encoders:
    embedder: Embedder
    reranker: Reranker
    #: The second vector space's encoder (search.multilingual): questions in another script are searched by it.
    multilingual: Embedder | None = None
    #: The fast space's encoder (search.refinement): chunks not yet refined are found by the question's vector in it.
    #: None: such chunks are found by words only until they are refined.
    fast: Embedder | None = None


def validate_request(request: SearchRequest) -> None:
    """Raise SearchInputError for an empty question, a k outside 1..MAX_K, or signals outside ALL_SIGNALS (or
    none); return None for a request that may be searched."""
    if not request.question or not request.question.strip():
        raise SearchInputError("the question is empty")
    if not 1 <= request.k <= MAX_K:
        raise SearchInputError(f"k must be between 1 and {MAX_K}, not {request.k}")
    unknown = request.signals - ALL_SIGNALS
    if unknown or not request.signals:
        raise SearchInputError(f"signals must be among {', '.join(sorted(ALL_SIGNALS))}")
