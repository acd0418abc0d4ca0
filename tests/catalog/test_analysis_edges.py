"""Analysis when sources misbehave: dropped tables, odd names, unreadable tables, broken views, wide tables."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, text

from catalog.card_text import render_card
from core.store.embedded import EmbeddedServer
from core.store.models import Note, NoteTable
from tests.catalog.analysis_support import Installation, new_installation
from tests.support import POSTGRES_SERVER


@pytest.fixture
def installation(store_server: EmbeddedServer, tmp_path: Path) -> Iterator[Installation]:
    made = new_installation(store_server, tmp_path / "home")
    yield made
    made.store.close()


def make_sqlite(path: Path, statements: list[str]) -> Path:
    with sqlite3.connect(path) as conn:
        for statement in statements:
            conn.execute(statement)
    return path


def test_dropped_table_turns_invisible_and_keeps_its_notes(installation: Installation, tmp_path: Path) -> None:
    db = make_sqlite(
        tmp_path / "shop.sqlite",
        [
            "CREATE TABLE ORDERS (ORD_NO INTEGER PRIMARY KEY, AMT NUMERIC)",
            "CREATE TABLE ORDERS_OLD (ORD_NO INTEGER PRIMARY KEY, AMT NUMERIC)",
            "INSERT INTO ORDERS VALUES (1, 10), (2, 20)",
        ],
    )
    installation.add("shop", f"sqlite:///{db}")
    assert installation.analyze("shop").error is None
    old = installation.tables("shop")["ORDERS_OLD"]
    with installation.store.transaction() as session:
        note = Note(
            text="nobody uses this since 2023", author_platform="slack", author_id="U1", tsv=func.to_tsvector("x")
        )
        session.add(note)
        session.flush()
        session.add(NoteTable(note_id=note.id, table_id=old.id))
    make_sqlite(db, ["DROP TABLE ORDERS_OLD", "CREATE TABLE RETURNS (RET_NO INTEGER PRIMARY KEY)"])
    report = installation.analyze("shop")
    assert report.invisible == ["ORDERS_OLD"]
    tables = installation.tables("shop")
    assert not tables["ORDERS_OLD"].visible
    assert tables["ORDERS_OLD"].invisible_since is not None
    assert tables["RETURNS"].visible
    assert report.reused == 1, "ORDERS did not change"
    with installation.store.transaction() as session:
        kept = session.query(NoteTable).filter_by(table_id=old.id).count()
    assert kept == 1


def test_awkward_names_empty_tables_and_huge_values(installation: Installation, tmp_path: Path) -> None:
    db = make_sqlite(
        tmp_path / "odd.sqlite",
        [
            'CREATE TABLE "select" ("from" INTEGER PRIMARY KEY, "Unit Price" NUMERIC, "수량" INTEGER)',
            'INSERT INTO "select" VALUES (1, 9.5, 3), (2, 7.25, 1)',
            'CREATE TABLE "Order Details" (id INTEGER PRIMARY KEY, body TEXT, blob BLOB)',
            "INSERT INTO \"Order Details\" VALUES (1, printf('%.*c', 1000000, 'x'), randomblob(2000000))",
            'CREATE TABLE "주문" (id INTEGER PRIMARY KEY)',
            'CREATE TABLE "we""ird" (a TEXT)',
        ],
    )
    installation.add("odd", f"sqlite:///{db}")
    report = installation.analyze("odd")
    assert report.error is None
    assert report.skipped == []
    tables = installation.tables("odd")
    assert set(tables) == {"select", "Order Details", "주문", 'we"ird'}
    assert tables["주문"].row_count == 0
    details = tables["Order Details"].card
    assert details is not None
    body = next(c for c in details["columns"] if c["name"] == "body")
    assert body["stats"]["avg_length"] <= 256
    assert len(tables["Order Details"].card_text or "") < 5000


def test_broken_view_is_degraded_with_a_reason(installation: Installation, tmp_path: Path) -> None:
    db = make_sqlite(
        tmp_path / "views.sqlite",
        [
            "CREATE TABLE A (ID INTEGER PRIMARY KEY)",
            "CREATE TABLE B (ID INTEGER PRIMARY KEY)",
            "CREATE VIEW V_B AS SELECT * FROM B",
            "DROP TABLE B",
        ],
    )
    installation.add("views", f"sqlite:///{db}")
    report = installation.analyze("views")
    assert report.error is None
    assert [name for name, _ in report.skipped] == ["V_B"]
    assert "A" in installation.tables("views")


def test_unreachable_source_is_reported_and_nothing_is_lost(installation: Installation, tmp_path: Path) -> None:
    db = make_sqlite(tmp_path / "gone.sqlite", ["CREATE TABLE T (ID INTEGER PRIMARY KEY)"])
    installation.add("gone", f"sqlite:///{db}")
    assert installation.analyze("gone").error is None
    db.unlink()
    report = installation.analyze("gone")
    assert report.error is not None
    assert "does not exist" in report.error
    assert installation.tables("gone")["T"].visible


def test_wide_table_card_is_shortened_and_cut_columns_open(installation: Installation, tmp_path: Path) -> None:
    columns = ", ".join(f"ATTR_{i:03d} TEXT" for i in range(1, 400))
    db = make_sqlite(tmp_path / "wide.sqlite", [f"CREATE TABLE SPEC (ID INTEGER PRIMARY KEY, {columns})"])
    with sqlite3.connect(db) as conn:
        placeholders = ", ".join("?" for _ in range(400))
        conn.executemany(
            f"INSERT INTO SPEC VALUES ({placeholders})",
            [(n, *(f"v{n % 7}-{i}" for i in range(1, 400))) for n in range(50)],
        )
    installation.add("wide", f"sqlite:///{db}")
    assert installation.analyze("wide").error is None
    spec = installation.tables("wide")["SPEC"]
    assert spec.card is not None
    stored = spec.card_text or ""
    assert len(stored) <= 6000 or stored.count("\n- ") == 400
    assert "- ID INTEGER PK" in stored
    assert "- ATTR_399 TEXT" in stored
    assert "Details cut for" in stored
    opened = render_card(spec.card, columns=["ATTR_399"])
    assert "ATTR_399 TEXT" in opened
    assert "distinct 7" in opened


@pytest.fixture
def restricted_postgres() -> Iterator[str]:
    name = f"ts_ro_{uuid.uuid4().hex[:8]}"
    role = f"ts_reader_{uuid.uuid4().hex[:6]}"
    server = create_engine(POSTGRES_SERVER, isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
        conn.execute(text(f"CREATE ROLE {role} LOGIN"))
    db = create_engine(POSTGRES_SERVER.rsplit("/", 1)[0] + f"/{name}", isolation_level="AUTOCOMMIT")
    with db.connect() as conn:
        conn.execute(text("CREATE TABLE open_t (id int primary key)"))
        conn.execute(text("CREATE TABLE secret_t (id int primary key)"))
        conn.execute(text(f"GRANT SELECT ON open_t, secret_t TO {role}"))
    db.dispose()
    yield f"postgresql://{role}@127.0.0.1:5432/{name}"
    with server.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f"DROP ROLE IF EXISTS {role}"))
    server.dispose()


@pytest.mark.postgres
def test_revoked_grant_makes_a_table_invisible(installation: Installation, restricted_postgres: str) -> None:
    installation.add("pg", restricted_postgres)
    assert installation.analyze("pg").error is None
    assert set(installation.tables("pg")) == {"open_t", "secret_t"}
    name = restricted_postgres.rsplit("/", 1)[1]
    role = restricted_postgres.split("//", 1)[1].split("@", 1)[0]
    admin = create_engine(POSTGRES_SERVER.rsplit("/", 1)[0] + f"/{name}", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"REVOKE SELECT ON secret_t FROM {role}"))
    admin.dispose()
    report = installation.analyze("pg")
    assert report.invisible == ["secret_t"]
    assert not installation.tables("pg")["secret_t"].visible
    assert installation.tables("pg")["open_t"].visible
