"""One analysed and indexed installation for the search tests: the sample ERP and billing databases, a wide
table, and an unrelated Spider database, with roles and directory users."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func

from catalog.analysis import AnalysisOptions
from core.access.permissions import Principal, resolve_principal
from core.access.users import UserRef
from core.store.embedded import EmbeddedServer
from core.store.models import Note, NoteTable
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import directory
from core.store.repositories import sources as source_repo
from search.encoders import BiEncoderReranker
from search.indexing import index_note
from search.service import Encoders, SearchRequest, SearchResult, search_tables
from tests.catalog.analysis_support import Installation, new_installation
from tests.support import SAMPLE_ROLES as ROLES
from tests.support import SPIDER, default_embedder, isolated_settings, sample_databases
from workers.catalog_refresh import refresh_source


@dataclass
class World:
    installation: Installation
    encoders: Encoders

    def search(self, question: str, *, user: str | None = None, **options: object) -> SearchResult:
        with self.installation.store.transaction() as session:
            if user is None:
                principal, viewer = Principal.for_operator(), None
            else:
                principal = resolve_principal(session, self.installation.settings.file, "slack", user)
                viewer = UserRef("slack", user)
            request = SearchRequest(question, **options)  # type: ignore[arg-type]
            return search_tables(session, principal, request, self.encoders, viewer)

    def note(self, database: str, table: str, text: str, *, private: bool = False, author: str = "U_SALES") -> None:
        with self.installation.store.transaction() as session:
            source = source_repo.by_name(session, database)
            assert source is not None
            row = catalog_repo.find_table(session, source.id, table)
            assert row is not None
            note = Note(
                text=text,
                author_platform="slack",
                author_id=author,
                private=private,
                tsv=func.to_tsvector("simple", ""),
            )
            session.add(note)
            session.flush()
            session.add(NoteTable(note_id=note.id, table_id=row.id))
            index_note(session, note.id, text, self.encoders.embedder)


def one_source_world(
    store_server: EmbeddedServer,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], None],
    roles: str = "",
) -> World:
    """An installation with one SQLite source `name` that `build` writes, `roles` added to its file, analysed and
    indexed with the default encoder. The caller closes its store."""
    home = tmp_path_factory.mktemp(f"{name}-home")
    installation = new_installation(store_server, home)
    path = tmp_path_factory.mktemp(f"{name}-sqlite") / f"{name}.sqlite"
    build(path)
    installation.add(name, f"sqlite:///{path}")
    if roles:
        config = home / "tablescout.yaml"
        config.write_text(config.read_text() + roles)
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    embedder = default_embedder()
    report = refresh_source(installation.settings, installation.store, name, AnalysisOptions(), embedder=embedder)
    assert report.analysis.error is None
    return World(installation, Encoders(embedder, BiEncoderReranker(embedder)))


def wide_table(path: Path) -> None:
    columns = [f"ATTR_{i:03d} TEXT" for i in range(1, 400)]
    columns[299] = "SATELLITE_UPLINK_FREQ_MHZ NUMERIC"
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE TABLE PLM_SPEC_SHEET (SPEC_ID INTEGER PRIMARY KEY, {', '.join(columns)})")


@pytest.fixture(scope="session")
def world(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("search-home")
    installation = new_installation(store_server, home)
    sample = sample_databases(tmp_path_factory.mktemp("sample"))
    wide = tmp_path_factory.mktemp("wide") / "plm.sqlite"
    wide_table(wide)
    concerts = tmp_path_factory.mktemp("spider") / "concert_singer.sqlite"
    shutil.copy(SPIDER / "concert_singer" / "concert_singer.sqlite", concerts)
    for name, path in (("erp", sample["erp"]), ("billing", sample["billing"]), ("plm", wide), ("concerts", concerts)):
        installation.add(name, f"sqlite:///{path}")
    config = home / "tablescout.yaml"
    config.write_text(config.read_text() + ROLES)
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    embedder = default_embedder()
    for name in ("erp", "billing", "plm", "concerts"):
        report = refresh_source(installation.settings, installation.store, name, AnalysisOptions(), embedder=embedder)
        assert report.analysis.error is None
    now = datetime.now(UTC)
    with installation.store.transaction() as session:
        sales = directory.upsert_user(session, platform="slack", user_id="U_SALES", synced_at=now)
        directory.upsert_user(session, platform="slack", user_id="U_GUEST", synced_at=now)
        group = directory.upsert_group(session, platform="slack", group_id="S_SALES", synced_at=now)
        directory.replace_members(session, group, [sales])
    yield World(installation, Encoders(embedder, BiEncoderReranker(embedder)))
    installation.store.close()
