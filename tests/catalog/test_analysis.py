"""Catalog analysis end to end on the sample ERP database, in SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from catalog.card_text import render_card
from catalog.sample_erp import load_into
from core.store.embedded import EmbeddedServer
from tests.catalog.analysis_support import Installation, new_installation
from tests.support import MARIADB_SERVER, POSTGRES_SERVER, sample_databases


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("sample")
    sample_databases(directory)
    return directory


@pytest.fixture(scope="module")
def mariadb_erp() -> Iterator[str]:
    name = f"ts_an_{uuid.uuid4().hex[:8]}"
    server = create_engine(MARIADB_SERVER)
    with server.begin() as conn:
        conn.execute(text(f"CREATE DATABASE `{name}`"))
    url = f"mysql+pymysql://root@127.0.0.1:3306/{name}"
    load_into(url, "erp")
    with create_engine(url).begin() as conn:
        # Every table's statistics settled now: InnoDB would otherwise recount a freshly loaded table in the
        # background, at any moment, and a changed row estimate rightly makes analysis measure the table again.
        names = conn.execute(text("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"))
        conn.exec_driver_sql("ANALYZE TABLE " + ", ".join(f"`{n}`" for (n,) in names))
    yield url
    with server.begin() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
    server.dispose()


@pytest.fixture(scope="module")
def postgres_erp() -> Iterator[str]:
    name = f"ts_an_{uuid.uuid4().hex[:8]}"
    server = create_engine(POSTGRES_SERVER, isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    load_into(url, "erp")
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("ANALYZE"))
    engine.dispose()
    yield url
    with server.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    server.dispose()


@pytest.fixture(
    scope="module",
    params=[
        "sqlite",
        pytest.param("mariadb", marks=pytest.mark.mariadb),
        pytest.param("postgres", marks=pytest.mark.postgres),
    ],
)
def analysed(
    request: pytest.FixtureRequest,
    store_server: EmbeddedServer,
    tmp_path_factory: pytest.TempPathFactory,
    sample_dir: Path,
) -> Iterator[tuple[Installation, Any]]:
    installation = new_installation(store_server, tmp_path_factory.mktemp("home"))
    if request.param == "sqlite":
        url = f"sqlite:///{sample_dir / 'erp.sqlite'}"
    else:
        url = request.getfixturevalue(f"{request.param}_erp")
    installation.add("erp", url, allow_privileged=request.param != "sqlite")  # root and postgres are superusers
    report = installation.analyze("erp")
    yield installation, report
    installation.store.close()


def card(installation: Installation, table: str) -> dict[str, Any]:
    row = installation.tables("erp")[table]
    assert row.card is not None
    return row.card


def test_every_table_is_analysed(analysed: tuple[Installation, Any]) -> None:
    installation, report = analysed
    assert report.error is None
    assert report.skipped == []
    assert report.tables == 18
    tables = installation.tables("erp")
    assert all(t.visible and t.card_text for t in tables.values())


def test_copies_are_found_with_evidence(analysed: tuple[Installation, Any]) -> None:
    installation, report = analysed
    copies = {table: (live, role) for table, live, role in report.copies}
    assert copies == {
        "ORD_MST_BAK": ("ORD_MST", "backup"),
        "ORD_MST_202312": ("ORD_MST", "snapshot"),
        "CUST_MST_TMP": ("CUST_MST", "staging"),
    }
    bak = card(installation, "ORD_MST_BAK")
    assert bak["role"] == "backup"
    assert bak["copy_of"] == "ORD_MST"
    assert bak["copy_evidence"]["key_containment"] == 1.0
    tables = installation.tables("erp")
    assert tables["ORD_MST_BAK"].copy_of_id == tables["ORD_MST"].id
    live = card(installation, "ORD_MST")
    assert live["role"] == "live"
    assert {c["table"] for c in live["copies"]} == {"ORD_MST_BAK", "ORD_MST_202312"}


def test_partitions_are_not_copies(analysed: tuple[Installation, Any]) -> None:
    installation, report = analysed
    assert sorted(report.partitions) == ["SALES_2023", "SALES_2024"]
    for name in ("SALES_2023", "SALES_2024"):
        assert card(installation, name)["role"] == "partition"
        assert card(installation, name)["copy_of"] is None


def test_no_live_table_is_demoted(analysed: tuple[Installation, Any]) -> None:
    installation, _ = analysed
    demoted = {name for name, t in installation.tables("erp").items() if t.copy_of_id is not None}
    assert demoted == {"ORD_MST_BAK", "ORD_MST_202312", "CUST_MST_TMP"}


def test_remark_is_flagged_and_status_codes_have_meanings(analysed: tuple[Installation, Any]) -> None:
    installation, _ = analysed
    orders = card(installation, "ORD_MST")
    assert "REMARK" in orders["watch"]
    assert "STATUS_CODE" in orders["watch"]["REMARK"]
    status = next(c for c in orders["columns"] if c["name"] == "STATUS_CODE")
    meanings = {c["code"]: c["meaning"] for c in status["codes"]}
    assert set(meanings) >= {"40", "90"}, meanings
    assert all(meanings.values()), meanings
    assert "CODE_DTL" in status["codes_source"]
    assert "ORD_STAT" in status["codes_source"]
    text = render_card(orders)
    assert "STATUS_CODE" in text
    assert "STATUS_CODE VARCHAR(2) " in text or "STATUS_CODE VARCHAR(2) |" in text
    status_line = next(line for line in text.splitlines() if line.startswith("- STATUS_CODE"))
    assert "codes: " in status_line
    assert "(from CODE_DTL group ORD_STAT, codes of Order status)" in status_line
    # the group's name comes from the table CODE_DTL's group column refers to
    assert status["codes_group"] == "Order status"
    assert status["codes_group_from"] == [None, "CODE_MST"]
    category = next(c for c in card(installation, "PRD_MST")["columns"] if c["name"] == "CTGRY_CD")
    assert category["codes_group"] == "Product category"


def test_other_traps_are_flagged(analysed: tuple[Installation, Any]) -> None:
    installation, _ = analysed
    returns = card(installation, "RET_DTL")["watch"]
    assert "negative" in returns.get("RET_AMT", "")
    shipments = card(installation, "SHIP_HIST")["watch"]
    assert "date stored as text" in shipments.get("SHIP_DT", "")
    customers = card(installation, "CUST_MST")["watch"]
    assert "soft-delete" in customers.get("USE_YN", "")


def test_joins(analysed: tuple[Installation, Any]) -> None:
    installation, report = analysed
    lines = card(installation, "ORD_DTL_H")
    to_orders = [j for j in lines["joins"] if j["to"] == "ORD_MST" and j["from_columns"] == ["ORD_NO"]]
    assert to_orders
    assert to_orders[0]["kind"] == "declared" or to_orders[0]["confidence"] >= 0.8
    returns = card(installation, "RET_DTL")
    inferred = [j for j in returns["joins"] if j["kind"] == "inferred" and j["to"] == "ORD_MST"]
    assert inferred, returns["joins"]
    assert "sampled values found" in inferred[0]["basis"]
    assert report.joins_declared >= 4
    # every card shows its joins from its own side: ORD_MST's card names the tables that join to it
    orders = card(installation, "ORD_MST")["joins"]
    assert orders
    assert all(j["to"] != "ORD_MST" for j in orders), orders
    assert {"to": "ORD_DTL_H", "from_columns": ["ORD_NO"], "to_columns": ["ORD_NO"]}.items() <= next(
        j for j in orders if j["to"] == "ORD_DTL_H"
    ).items()
    copies = {"ORD_MST_BAK", "ORD_MST_202312", "CUST_MST_TMP"}
    for name in copies:
        assert all(j["kind"] == "declared" for j in card(installation, name)["joins"])


def test_summary_and_row_counts(analysed: tuple[Installation, Any]) -> None:
    installation, _ = analysed
    orders = card(installation, "ORD_MST")
    assert orders["row_count"] == 20000
    with installation.store.transaction() as session:
        from core.store.repositories import sources

        source = sources.by_name(session, "erp")
        assert source is not None
        summary = source.summary or ""
    assert 0 < len(summary) < 600
    assert "ORD_MST" in summary
    assert "ORD_MST_BAK" in summary


def test_second_run_reuses_unchanged_tables(analysed: tuple[Installation, Any]) -> None:
    installation, first = analysed
    again = installation.analyze("erp")
    assert again.error is None
    assert again.reused == 18
    assert again.measured == 0
    assert sorted(again.copies) == sorted(first.copies)
