"""An isolated installation with a migrated store, for analysis tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from catalog.analysis import AnalysisOptions, AnalysisReport, analyze_source
from catalog.registration import add_source
from core.config.settings import Settings
from core.store import migrate
from core.store.database import Store, open_store
from core.store.embedded import EmbeddedServer
from core.store.models import SourceTable
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo
from tests.conftest import create_scratch_database
from tests.support import isolated_settings


@dataclass
class Installation:
    settings: Settings
    store: Store

    def add(self, name: str, url: str, *, allow_privileged: bool = False) -> None:
        add_source(self.settings, self.store, name, url, [], allow_privileged=allow_privileged)
        self.settings = isolated_settings(
            self.settings.home,
            database_url=self.settings.database_url.get_secret_value(),  # type: ignore[union-attr]
        )

    def analyze(self, name: str, **options: object) -> AnalysisReport:
        return analyze_source(self.settings, self.store, name, AnalysisOptions(**options))  # type: ignore[arg-type]

    def tables(self, name: str) -> dict[str, SourceTable]:
        with self.store.transaction() as session:
            source = source_repo.by_name(session, name)
            assert source is not None
            rows = catalog_repo.tables_of(session, source.id)
            for row in rows:
                session.expunge(row)
        return {t.name: t for t in rows}


def new_installation(server: EmbeddedServer, home: Path) -> Installation:
    url = create_scratch_database(server.url, "ts_an", migrated=True).render_as_string(hide_password=False)
    settings = isolated_settings(home, database_url=url)
    store = open_store(settings)
    migrate.upgrade(store.engine)  # finds it current
    return Installation(settings, store)
