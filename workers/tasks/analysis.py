"""Scheduled and on-demand re-analysis of sources (the same service as `tablescout analyze`)."""

from __future__ import annotations

import logging

from catalog.analysis import AnalysisOptions
from core.config.settings import load_settings
from core.store import migrate
from core.store.database import open_store
from core.store.repositories import sources as source_repo
from search.index_upkeep import IndexUpkeep
from workers.app import task
from workers.catalog_refresh import refresh_source

log = logging.getLogger(__name__)


def run_analysis(names: list[str] | None, *, full: bool = False) -> dict[str, str]:
    """Analyse the named sources (all when None); returns source → "ok" or the reason it failed."""
    settings = load_settings()
    store = open_store(settings)
    try:
        migrate.require_current(store.engine)
        if names is None:
            with store.transaction() as session:
                names = [s.name for s in source_repo.all_sources(session)]
        outcome = {}
        with IndexUpkeep(store) as upkeep:
            for name in names:
                report = refresh_source(settings, store, name, AnalysisOptions(full=full), upkeep=upkeep).analysis
                outcome[name] = report.error or "ok"
                log.info(
                    "analysed %s: %d tables, %d copies, %d skipped",
                    name,
                    report.tables,
                    len(report.copies),
                    len(report.skipped),
                )
        return outcome
    finally:
        store.close()


@task("tablescout.catalog.analyze_source")
def analyze_source_task(name: str, full: bool = False) -> None:
    run_analysis([name], full=full)


@task("tablescout.catalog.analyze_all")
def analyze_all_task() -> None:
    run_analysis(None)
