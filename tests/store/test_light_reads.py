"""The plain-SQL reads of the light commands answer what the ORM reads they stand in for answer, in the same order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.store import light_reads
from core.store.database import Store
from core.store.embedded import EmbeddedServer
from core.store.light_store import libpq_uri, light_connection
from core.store.models import Note, NoteTable, Source, SourceTable
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo
from search.notes import list_notes
from tablescout.cli import source_listing
from tests.conftest import create_scratch_database
from tests.support import isolated_settings

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def _conn(session: Session) -> psycopg.Connection:
    """The psycopg connection under the test's session: it sees the rows the test added."""
    driver = session.connection().connection.driver_connection
    assert isinstance(driver, psycopg.Connection)
    return driver


@pytest.fixture
def world(session: Session) -> dict[str, Any]:
    """Two sources; tables differing only in case, one invisible, one in a schema; notes shared, private, deleted,
    edited and on two tables."""
    erp = Source(name="lr_erp", aliases=["LR_Books"], engine="postgresql", url_ref="postgresql://h/erp")
    crm = Source(name="lr_crm", engine="sqlite", engine_version="3.40", url_ref="sqlite://", write_capabilities=["x"])
    session.add_all([erp, crm])
    session.flush()
    tables = {
        "orders": SourceTable(source_id=erp.id, name="orders", card={"kind": "table", "columns": [1, 2]}),
        "Orders": SourceTable(source_id=erp.id, name="Orders", card={"kind": "table"}),
        "ledger": SourceTable(source_id=erp.id, schema_name="fin", name="ledger", card={"z": 1, "a": 2}),
        "old": SourceTable(source_id=erp.id, name="old", visible=False, card={"kind": "table"}),
        "people": SourceTable(source_id=crm.id, name="people"),
    }
    session.add_all(tables.values())
    session.flush()
    specs = [
        ("shared on two", False, None, None, ["ledger", "people"]),
        ("private", True, None, None, ["orders"]),
        ("deleted", False, T0, None, ["orders"]),
        ("edited", False, None, T0 + timedelta(hours=1), ["orders"]),
        ("same time", False, None, None, ["old"]),
    ]
    notes = []
    for i, (text, private, deleted, edited, on) in enumerate(specs):
        note = Note(
            text=text,
            author_platform="slack",
            author_id=f"U{i}",
            private=private,
            created_at=T0 + timedelta(minutes=min(i, 3)),
            deleted_at=deleted,
            edited_at=edited,
            tsv=func.to_tsvector("simple", text),
        )
        session.add(note)
        session.flush()
        notes.append(note.id)
        session.add_all(NoteTable(note_id=note.id, table_id=tables[t].id) for t in on)
    session.flush()
    return {"erp": erp, "crm": crm, "tables": tables, "notes": set(notes)}


def test_sources_counts_and_lookup_match_the_repositories(session: Session, world: dict[str, Any]) -> None:
    conn = _conn(session)
    mine = {"lr_erp", "lr_crm"}
    light = [s for s in light_reads.sources(conn) if s.name in mine]
    orm = [s for s in source_repo.all_sources(session) if s.name in mine]
    assert [(s.id, s.name, s.aliases, s.engine, s.engine_version, s.url_ref, s.write_capabilities) for s in light] == [
        (s.id, s.name, tuple(s.aliases), s.engine, s.engine_version, s.url_ref, s.write_capabilities) for s in orm
    ]
    assert light_reads.table_counts(conn)[world["erp"].id] == source_repo.table_counts(session)[world["erp"].id] == 3
    for label in ("LR_ERP", "lr_books", "nope"):
        found, expected = light_reads.source_by_name_or_alias(conn, label), source_repo.by_name_or_alias(session, label)
        assert (found and found.id) == (expected and expected.id)


@pytest.mark.parametrize(
    ("name", "schema"), [("orders", None), ("ORDERS", None), ("Orders", ""), ("ledger", None), ("ledger", "fin")]
)
def test_find_table_matches_the_repository(session: Session, world: dict[str, Any], name: str, schema: str) -> None:
    conn, source_id = _conn(session), world["erp"].id
    found, expected = (
        light_reads.find_table(conn, source_id, name, schema),
        catalog_repo.find_table(session, source_id, name, schema),
    )
    assert (found and (found.id, found.visible, found.card)) == (
        expected and (expected.id, expected.visible, expected.card)
    )
    assert sorted(light_reads.table_names(conn, source_id)) == sorted(
        t.name for t in catalog_repo.tables_of(session, source_id)
    )


def test_notes_match_list_notes_and_the_cards_notes(session: Session, world: dict[str, Any]) -> None:
    conn, mine = _conn(session), world["notes"]
    views = list_notes(session, Principal.for_operator(), None)
    light = [n.contract() for n in light_reads.live_notes(conn) if n.id in mine]
    assert light == [v.contract() for v in views if v.id in mine]
    assert [n["text"] for n in light] == ["same time", "edited", "private", "shared on two"]
    assert light[-1]["tables"] == ["people", "fin.ledger"]  # by database, then schema and name
    assert light[-1]["database"] == "lr_crm"
    orders = world["tables"]["orders"].id
    # the ORM read the card command made before: shared live notes of the table, newest first, five at most
    shared = session.scalars(
        select(Note)
        .join(NoteTable, NoteTable.note_id == Note.id)
        .where(NoteTable.table_id == orders, Note.deleted_at.is_(None), Note.private.is_(False))
        .order_by(Note.created_at.desc(), Note.id.desc())
        .limit(5)
    )
    assert [(n.id, n.text, n.author, n.created_at) for n in light_reads.shared_notes(conn, orders)] == [
        (n.id, n.text, f"{n.author_platform}:{n.author_id}", n.created_at) for n in shared
    ]


def test_source_listing_merges_the_store_and_the_file(session: Session, world: dict[str, Any], tmp_path: Any) -> None:
    (tmp_path / "tablescout.yaml").write_text(
        "sources:\n  lr_erp:\n    url: postgresql://h/erp\n  lr_new:\n    url: postgresql://u:${PW}@h/new\n"
        "    aliases: [fresh]\n"
    )
    settings = isolated_settings(tmp_path)
    listed = {s.name: s for s in source_listing.list_sources(settings, _conn(session)) if s.name.startswith("lr_")}
    assert list(listed) == ["lr_crm", "lr_erp", "lr_new"]  # by name, the store's and the file's
    crm, erp, new = listed["lr_crm"], listed["lr_erp"], listed["lr_new"]
    # registered and in the file: the store's row, its visible tables counted (not the invisible "old")
    assert (erp.registered, erp.in_config, erp.aliases, erp.engine, erp.url, erp.tables) == (
        True,
        True,
        ("LR_Books",),
        "postgresql",
        "postgresql://h/erp",
        3,
    )
    assert erp.privileges is None  # never checked
    # registered only: its account's extra privileges as labels
    assert (crm.registered, crm.in_config, crm.engine, crm.engine_version, crm.tables, crm.privileges) == (
        True,
        False,
        "sqlite",
        "3.40",
        1,
        ("x",),
    )
    # in the file only: the URL with its driver and the secret's placeholder, never its value; nothing of the store
    assert (new.registered, new.in_config, new.aliases, new.engine, new.tables, new.analysed_at) == (
        False,
        True,
        ("fresh",),
        None,
        0,
        None,
    )
    assert new.url == "postgresql+psycopg://u:${PW}@h/new"


def test_libpq_uri_takes_plain_postgres_urls_only() -> None:
    assert libpq_uri("postgresql+psycopg://u:p%40ss@/db?host=%2Ftmp") == "postgresql://u:p%40ss@/db?host=%2Ftmp"
    assert libpq_uri("postgres://u@h:5433/db") == "postgresql://u@h:5433/db"
    assert libpq_uri("mysql://u@h/db") is None
    assert libpq_uri("postgresql://u@h/db?host=a&host=b") is None  # several hosts: SQLAlchemy's reading
    assert libpq_uri("postgresql://u:p@ss@h/db") is None


def test_light_connection_only_to_a_current_store(store: Store, store_server: EmbeddedServer, tmp_path: Path) -> None:
    """A store at another revision (here: never migrated) is left to the usual way, which explains what is wrong."""
    current = store.engine.url.render_as_string(hide_password=False)
    conn = light_connection(isolated_settings(tmp_path, database_url=current))
    assert conn is not None
    assert conn.read_only
    conn.close()
    empty = create_scratch_database(store_server.url, "ts_light").render_as_string(hide_password=False)
    assert light_connection(isolated_settings(tmp_path, database_url=empty)) is None
    assert light_connection(isolated_settings(tmp_path)) is None  # the embedded store: started the usual way
