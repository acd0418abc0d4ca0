"""Indexing one or more sources with the vector index kept row by row, or set aside and built once for a large load.

A run (one `tablescout analyze`, one scheduled analysis of every source) indexes its sources through one
`IndexUpkeep`. While the chunk vectors the run writes stay few, each source is indexed in one transaction and the
vector index takes them row by row. Once they reach `BulkPolicy.min_chunks` and a `BulkPolicy.share` of all the
chunks stored, the index is set aside (`core.store.repositories.vector_index`): that source's chunks are written in
a second transaction, the rest of the run's sources are written without index upkeep, and the index is built once
when the run ends. Searches meanwhile find nearest chunks by an exact scan.

Refinement (`search.refinement`) runs through the same upkeep: the fast pass of indexing writes no vector the index
holds, and the vectors refinement writes count as a write of the run, weighed by the same policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType

from core.store.database import Store
from core.store.repositories import search_index, search_queries, vector_index
from core.store.repositories.chunk_copy import ChunkWriter
from search.encoders import Embedder
from search.indexing import IndexReport, apply_index, plan_index
from search.refinement import refine_source


@dataclass(frozen=True)
class BulkPolicy:
    """When a run's chunk vectors are worth a rebuild of the vector index instead of row-by-row upkeep.

    Row-by-row upkeep costs a few ms per chunk at 35,000 chunks and 9-14 ms at 333,000; a build once 0.7 ms per
    chunk stored (idle 2-core machine, pgvector 0.6.2; bench/results/search_latency_100k*.md). A run writing a
    quarter of the chunks is past the break-even at every size measured; below 10,000 chunks the upkeep takes
    seconds and searches keep the index.
    """

    min_chunks: int = 10_000
    share: float = 0.25


class IndexUpkeep:
    """The vector index across one run of indexing; use as a context manager around the run's `index` calls."""

    def __init__(self, store: Store, policy: BulkPolicy = BulkPolicy()) -> None:
        self.store = store
        self.policy = policy
        self.written = 0  # chunk vectors this run has written so far
        self.suspension: vector_index.Suspension | None = None
        #: seconds the vector index took to build at the end of the run, None when it was not built
        self.built_s: float | None = None

    def index(
        self, source_id: int, summary: str | None, embedder: Embedder, fast: Embedder | None = None
    ) -> IndexReport:
        """Bring one source's search index up to date; with `fast`, new and changed chunks get its vectors and wait
        for refinement (search.refinement), which is best run before `close` while the index is set aside."""
        with vector_index.source_indexing(self.store.engine, source_id):
            if fast is not None:
                return self._index_fast(source_id, summary, embedder, fast)
            with self.store.transaction() as session:
                plan = plan_index(session, source_id, summary, embedder)
                stored = search_queries.search_stats(session).total
                if self.suspension is not None or not self._worth_setting_aside(plan.vectors_written, stored):
                    report = apply_index(session, plan)
                    self.written += plan.vectors_written
                    return report
            # The index is dropped between the two transactions: a concurrent drop waits for transactions that
            # read the table, this job's own first one included.
            self.suspension = vector_index.suspend(self.store.engine)
            with self.store.transaction() as session:
                report = apply_index(session, plan)
            self.written += plan.vectors_written
            return report

    def _index_fast(self, source_id: int, summary: str | None, embedder: Embedder, fast: Embedder) -> IndexReport:
        """The fast pass writes no vector the vector index keeps, so nothing waits for a plan: new chunks are
        written by a `ChunkWriter` batch by batch, the server making their full-text vectors while the next batch
        is cut and embedded, all in one transaction."""
        with self.store.transaction() as session:
            with ChunkWriter(session) as writer:
                plan = plan_index(session, source_id, summary, embedder, fast, sink=writer.send)
            return apply_index(session, plan)

    def refine(self, source_id: int, embedder: Embedder) -> int:
        """Give the source's chunks still without their vector one (search.refinement), the index set aside first
        when they are worth it; how many were given."""
        with self.store.transaction() as session:
            pending = search_index.unrefined_count(session, source_id)
            stored = search_queries.search_stats(session).total
        if pending and self.suspension is None and self._worth_setting_aside(pending, stored):
            self.suspension = vector_index.suspend(self.store.engine)
        made = refine_source(self.store, source_id, embedder)
        self.written += made
        return made

    def _worth_setting_aside(self, pending: int, stored: int) -> bool:
        run = self.written + pending
        return run >= self.policy.min_chunks and run >= self.policy.share * (stored + pending)

    def close(self) -> None:
        """Build the vector index again if this run set it aside, or if it is missing or invalid."""
        if self.suspension is not None:
            suspension, self.suspension = self.suspension, None
            self.built_s = suspension.resume()
        else:
            self.built_s = vector_index.ensure(self.store.engine)

    def __enter__(self) -> IndexUpkeep:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
