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


@dataclass
class RefreshReport:
    analysis: AnalysisReport
    index: IndexReport | None = None


def refresh_source(
    settings: Settings,
    store: Store,
    name: str,
    options: AnalysisOptions,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    upkeep: IndexUpkeep | None = None,
    multilingual: Embedder | None = None,
) -> RefreshReport:
    """Analyse the source and index it; `upkeep` is the run's vector index upkeep when several sources are
    refreshed together (a run of its own otherwise). `multilingual` replaces the settings' second encoder
    (`search.multilingual`)."""
    analysis = analyze_source(settings, store, name, options, progress)
    if analysis.error is not None:
        return RefreshReport(analysis)
    model = embedder or embedder_for(settings)
    with store.transaction() as session:
        source = source_repo.by_name(session, analysis.source)
        assert source is not None
        source_id, summary = source.id, source.summary
    if upkeep is not None:
        report = upkeep.index(source_id, summary, model)
    else:
        with IndexUpkeep(store) as own:
            report = own.index(source_id, summary, model)
    second = multilingual if multilingual is not None else multilingual_for(settings)
    if second is not None:  # searchable already; the vectors for questions in other scripts follow
        report.multilingual = index_multilingual(store, source_id, second)
    return RefreshReport(analysis, report)
