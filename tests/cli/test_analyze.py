from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.cli.conftest import Cli


@pytest.fixture
def with_sample(cli: Cli) -> Cli:
    assert cli("init").returncode == 0
    built = cli("sample", "build", "--register")
    assert built.returncode == 0, built.stderr
    return cli


def test_analyze_all_then_card(with_sample: Cli) -> None:
    result = with_sample("analyze", "--all")
    assert result.returncode == 0, result.stderr
    assert "ORD_MST_BAK is a backup copy of ORD_MST" in result.stdout
    assert "CUST_MST_TMP is a staging copy of CUST_MST" in result.stdout
    assert "partitions SALES_2023, SALES_2024" in result.stdout
    assert "declared" in result.stdout
    assert "erp" in result.stderr, "the progress bar names the source on stderr"
    # searchable at once by the fast vectors, and refined to the main encoder's before the command ends
    assert "erp: refining" in result.stderr
    assert "erp: search index refined" in result.stdout

    text = with_sample("card", "erp", "ORD_MST")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Table ORD_MST in erp (sqlite")
    assert "Copies of this table (do not use unless asked): ORD_MST_202312" in text.stdout
    assert "WATCH: free text" in text.stdout

    as_json = with_sample("card", "erp", "ord_mst_bak", "--json")
    card = json.loads(as_json.stdout)
    assert card["table"] == "ORD_MST_BAK"
    assert card["role"] == "backup"
    assert card["copy_of"] == "ORD_MST"
    assert {c["name"] for c in card["columns"]} >= {"ORD_NO", "STATUS_CODE", "REMARK"}
    assert card["notes"] == []

    detail = with_sample("card", "erp", "ORD_MST", "--columns", "STATUS_CODE")
    assert "Details of 1 requested column(s)" in detail.stdout

    again = with_sample("analyze", "erp", "--json")
    [report] = json.loads(again.stdout)
    assert report["reused"] == 18
    assert report["error"] is None


def test_schema_only(with_sample: Cli) -> None:
    result = with_sample("analyze", "billing", "--schema-only")
    assert result.returncode == 0, result.stderr
    card = json.loads(with_sample("card", "billing", "INV_HDR", "--json").stdout)
    assert card["row_count_exact"] is False
    assert all("stats" not in c for c in card["columns"])


def test_bad_input(with_sample: Cli, tmp_path: Path) -> None:
    neither = with_sample("analyze")
    assert neither.returncode == 1
    assert "name the sources to analyse, or use --all" in neither.stderr
    unknown = with_sample("analyze", "crm")
    assert unknown.returncode == 1
    assert "there is no source named 'crm'" in unknown.stderr
    before = with_sample("card", "erp", "ORD_MST")
    assert "has not been analysed yet" in before.stderr
    assert with_sample("analyze", "erp").returncode == 0
    typo = with_sample("card", "erp", "ORD_MSTT")
    assert typo.returncode == 1
    assert "did you mean ORD_MST" in typo.stderr


def test_a_failing_source_does_not_stop_the_others(with_sample: Cli, tmp_path: Path) -> None:
    lost = tmp_path / "lost.sqlite"
    with sqlite3.connect(lost) as conn:
        conn.execute("CREATE TABLE T (ID INTEGER PRIMARY KEY)")
    assert with_sample("source", "add", "lost", f"sqlite:///{lost}").returncode == 0
    lost.unlink()
    result = with_sample("analyze", "--all")
    assert result.returncode == 1
    assert "lost: not analysed" in result.stderr
    assert "ORD_MST_BAK is a backup copy of ORD_MST" in result.stdout


def test_analyze_builds_a_missing_vector_index_and_says_so(with_sample: Cli) -> None:
    first = with_sample("analyze", "erp", "--schema-only")
    assert first.returncode == 0, first.stderr
    assert "vector index built" not in first.stdout  # a small run keeps the index up to date row by row
    engine = create_engine(with_sample.env["TABLESCOUT_DATABASE_URL"])
    try:
        with engine.begin() as conn:  # as a worker killed between setting the index aside and building it leaves it
            conn.execute(text("DROP INDEX ix_search_chunks_embedding"))
        again = with_sample("analyze", "erp", "--schema-only")
        assert again.returncode == 0, again.stderr
        assert "search: vector index built in" in again.stdout
        with engine.connect() as conn:
            valid = conn.scalar(
                text("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('ix_search_chunks_embedding')")
            )
        assert valid is True
    finally:
        engine.dispose()


def test_analyze_without_fast_indexing_embeds_every_chunk_at_once(with_sample: Cli) -> None:
    result = with_sample("analyze", "erp", "--schema-only", env={"TABLESCOUT_FAST_INDEXING": "false"})
    assert result.returncode == 0, result.stderr
    assert "refin" not in result.stdout + result.stderr
    assert "erp: search index" in result.stdout
    url = with_sample.env["TABLESCOUT_DATABASE_URL"]
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            waiting = conn.scalar(text("SELECT count(*) FROM search_chunks WHERE embedding IS NULL"))
            fast = conn.scalar(text("SELECT count(*) FROM search_chunks WHERE fast_embedding IS NOT NULL"))
    finally:
        engine.dispose()
    assert (waiting, fast) == (0, 0)
