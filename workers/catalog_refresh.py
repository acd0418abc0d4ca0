"""Analyse a source and bring its search index up to date: the chain the CLI and the scheduled task share."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.analysis import AnalysisOptions, AnalysisReport, Progress, analyze_source
from core.config.settings import Settings
from core.store.database import Store
from core.store.repositories import sources as source_repo
from search.encoders import Embedder, embedder_for
from search.index_upkeep import IndexUpkeep
from search.indexing import IndexReport
from search.multilingual import index_multilingual, multilingual_for
from search.refinement import fast_embedder_for


@dataclass
class RefreshReport:
    analysis: AnalysisReport
    index: IndexReport | None = None
    source_id: int | None = None  # the source indexed (None when analysis failed)


def refresh_source(
    settings: Settings,
    store: Store,
    name: str,
    options: AnalysisOptions,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    upkeep: IndexUpkeep | None = None,
    multilingual: Embedder | None = None,
    fast: Embedder | None = None,
    refine: bool = True,
) -> RefreshReport:
    """Analyse the source and index it; `upkeep` is the run's vector index upkeep when several sources are
    refreshed together (a run of its own otherwise). `multilingual` replaces the settings' second encoder
    (`search.multilingual`). New and changed chunks are embedded by `fast` when given, else by the settings' fast
    encoder when the settings' own encoder indexes (no `embedder` given) and `fast_indexing` is on, and then
    refined here unless `refine` is False (the caller refines them, or queues their refinement:
    `search.refinement`, and then makes their multilingual vectors, which cost as much again: both wait until every
    source is searchable); a caller's own `embedder` without `fast` indexes in one pass as before."""
    analysis = analyze_source(settings, store, name, options, progress)
    if analysis.error is not None:
        return RefreshReport(analysis)
    model = embedder or embedder_for(settings)
    with store.transaction() as session:
        source = source_repo.by_name(session, analysis.source)
        assert source is not None
        source_id, summary = source.id, source.summary
    quick = fast if fast is not None else (fast_embedder_for(settings) if embedder is None else None)
    if upkeep is not None:
        report = upkeep.index(source_id, summary, model, quick)
        if refine:
            report.refined = upkeep.refine(source_id, model)
    else:
        with IndexUpkeep(store) as own:
            report = own.index(source_id, summary, model, quick)
            if refine:
                report.refined = own.refine(source_id, model)
    second = multilingual if multilingual is not None else multilingual_for(settings)
    if refine and second is not None:  # searchable already; the vectors for questions in other scripts follow
        report.multilingual = index_multilingual(store, source_id, second)
    return RefreshReport(analysis, report, source_id)
