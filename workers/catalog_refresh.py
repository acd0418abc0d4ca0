"""Analyse a source and bring its search index up to date: the chain the CLI and the scheduled task share."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.analysis import AnalysisOptions, AnalysisReport, Progress, analyze_source
from core.settings import Settings
from core.store.database import Store
from core.store.repositories import sources as source_repo
from search.encoders import Embedder, embedder_for
from search.index_upkeep import IndexUpkeep
from search.indexing import IndexReport


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
) -> RefreshReport:
    """Analyse the source and index it; `upkeep` is the run's vector index upkeep when several sources are
    refreshed together (a run of its own otherwise)."""
    analysis = analyze_source(settings, store, name, options, progress)
    if analysis.error is not None:
        return RefreshReport(analysis)
    model = embedder or embedder_for(settings)
    with store.transaction() as session:
        source = source_repo.by_name(session, analysis.source)
        assert source is not None
        source_id, summary = source.id, source.summary
    if upkeep is not None:
        return RefreshReport(analysis, upkeep.index(source_id, summary, model))
    with IndexUpkeep(store) as own:
        return RefreshReport(analysis, own.index(source_id, summary, model))
