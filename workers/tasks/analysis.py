"""Scheduled and on-demand re-analysis of sources (the same service as `tablescout analyze`), and the refinement of
their chunk vectors that follows (search.refinement)."""

from __future__ import annotations

import logging

from catalog.analysis import AnalysisOptions
from core.config.settings import load_settings
from core.store import migrate
from core.store.database import open_store
from core.store.repositories import sources as source_repo
from search.encoders import embedder_for
from search.index_upkeep import IndexUpkeep
from search.multilingual import index_multilingual, multilingual_for
from search.refinement import has_unrefined
from workers.app import task
from workers.catalog_refresh import refresh_source

log = logging.getLogger(__name__)


def run_analysis(names: list[str] | None, *, full: bool = False) -> dict[str, str]:
    """Analyse the named sources (all when None); returns source → "ok" or the reason it failed. With a broker the
    refinement of each source's new vectors is queued as a job of its own (the sources are searchable meanwhile);
    without one (a job run in the calling process) it runs here."""
    settings = load_settings()
    store = open_store(settings)
    queue = settings.redis_url is not None
    try:
        migrate.require_current(store.engine)
        if names is None:
            with store.transaction() as session:
                names = [s.name for s in source_repo.all_sources(session)]
        outcome = {}
        indexed: list[int] = []
        with IndexUpkeep(store) as upkeep:
            for name in names:
                refreshed = refresh_source(
                    settings, store, name, AnalysisOptions(full=full), upkeep=upkeep, refine=not queue
                )
                report = refreshed.analysis
                outcome[name] = report.error or "ok"
                if refreshed.source_id is not None:
                    indexed.append(refreshed.source_id)
                log.info(
                    "analysed %s: %d tables, %d copies, %d skipped",
                    name,
                    report.tables,
                    len(report.copies),
                    len(report.skipped),
                )
        if queue:  # the multilingual vectors come with the refinement (workers.catalog_refresh)
            for source_id in indexed:
                if has_unrefined(store, source_id) or multilingual_for(settings) is not None:
                    refine_source_task.delay(source_id)
        return outcome
    finally:
        store.close()


@task("tablescout.catalog.analyze_source")
def analyze_source_task(name: str, full: bool = False) -> None:
    run_analysis([name], full=full)


@task("tablescout.catalog.analyze_all")
def analyze_all_task() -> None:
    run_analysis(None)


@task("tablescout.search.refine_source")
def refine_source_task(source_id: int) -> int:
    """Give the source's chunks written by the fast pass their vectors (search.refinement), then the multilingual
    vectors those and any other chunks lack (search.multilingual); how many main vectors were given.
    Idempotent and resumable: a redelivered job goes on where the last one stopped, and one that finds another
    refinement of the source running leaves the work to it. Many vectors set the vector index aside and build it
    once at the end, as a large analysis does (search.index_upkeep)."""
    settings = load_settings()
    store = open_store(settings)
    try:
        migrate.require_current(store.engine)
        with IndexUpkeep(store) as upkeep:
            made = upkeep.refine(source_id, embedder_for(settings))
        second = multilingual_for(settings)
        multilingual = index_multilingual(store, source_id, second) if second is not None else 0
        log.info("refined %d chunk vectors of source %d; %d multilingual vectors made", made, source_id, multilingual)
        return made
    finally:
        store.close()
