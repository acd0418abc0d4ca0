"""The executor holds on its own with a privileged account (MariaDB root, PostgreSQL superuser postgres, SQLite),
the guard bypassed: session changes never outlive a call, advisory locks are released, files and programs are not
written or run, process-wide SQLite pragmas never run, catalog reads need a grant, and huge values or temporary
space are capped. Each test counts its attempts and asserts that none got through."""

from __future__ import annotations

import contextlib
import resource
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text

from catalog.sample_erp.digest import content_digest
from tests.workers.sql.conftest import SqlSource
from workers.sql.engines import create_source_engine
from workers.sql.limits import MAX_CELL_CHARS, SqlLimits
from workers.sql.readonly import ExecutionError, ExecutionRefused, Fetched, execute_read_only, run_read_only

LIMITS = SqlLimits(timeout_s=10)


@pytest.fixture(scope="module")
def engine(sql_source: SqlSource) -> Iterator[Engine]:
    created = create_source_engine(sql_source.url)
    yield created
    created.dispose()


def _q(source: SqlSource, name: str) -> str:
    return str(source.admin.dialect.identifier_preparer.quote_identifier(name))


def _tables(source: SqlSource) -> set[str]:
    from sqlalchemy import inspect

    return set(inspect(source.admin).get_table_names())


def _refused_or_failed(engine: Engine, sql: str, *, session_only: bool = False) -> None:
    run = run_read_only if session_only else execute_read_only
    with pytest.raises(ExecutionError):
        run(engine, sql, LIMITS)


def test_session_changes_do_not_outlive_a_call(sql_source: SqlSource, engine: Engine) -> None:
    """A statement that makes the session writable, then DDL and DML in the next call: each call gets a fresh
    session, so the write meets a read-only one (run_read_only: the engine's session alone, no text check)."""
    bak, dtl, ordm = _q(sql_source, "ORD_MST_BAK"), _q(sql_source, "ORD_DTL_H"), _q(sql_source, "ORD_MST")
    openers = {
        "mariadb": [
            "SET SESSION TRANSACTION READ WRITE",
            "SET SESSION tx_read_only = 0",
            "SET @@session.transaction_read_only = 0",
        ],
        "postgres": [
            "SET SESSION default_transaction_read_only = off",
            "SELECT set_config('default_transaction_read_only', 'off', false)",
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        ],
        "sqlite": ["PRAGMA query_only = OFF", "PRAGMA writable_schema = ON", "PRAGMA journal_mode = WAL"],
    }[sql_source.kind]
    writes = [f"DROP TABLE {bak}", f"DELETE FROM {dtl}", f"CREATE TABLE ts_ctas AS SELECT * FROM {ordm}"]
    if sql_source.kind != "sqlite":
        writes.append(f"TRUNCATE TABLE {dtl}")
    before, tables = content_digest(sql_source.admin, "erp"), _tables(sql_source)
    attempts = 0
    for opener in openers:
        for write in writes:
            attempts += 1
            with contextlib.suppress(ExecutionError):  # refused already (SQLite's authorizer): all the better
                run_read_only(engine, opener, LIMITS)
            _refused_or_failed(engine, write, session_only=True)
            _refused_or_failed(engine, write)
    assert attempts == len(openers) * len(writes)
    assert content_digest(sql_source.admin, "erp") == before
    assert _tables(sql_source) == tables  # 0 writes


def test_advisory_locks_end_with_the_call(sql_source: SqlSource, engine: Engine) -> None:
    if sql_source.kind == "sqlite":
        pytest.skip("SQLite has no advisory locks")
    key = secrets.randbelow(1_000_000) + 1
    lock = {"mariadb": f"SELECT GET_LOCK('ts_lock_{key}', 0)", "postgres": f"SELECT pg_advisory_lock({key})"}
    free = {
        "mariadb": f"SELECT IS_FREE_LOCK('ts_lock_{key}')",
        "postgres": f"SELECT count(*) = 0 FROM pg_locks WHERE locktype = 'advisory' AND objid = {key}",
    }
    assert len(execute_read_only(engine, lock[sql_source.kind], LIMITS).rows) == 1
    deadline = time.monotonic() + 5
    with sql_source.admin.connect() as conn:
        while not bool(conn.execute(text(free[sql_source.kind])).scalar()):
            assert time.monotonic() < deadline, "the advisory lock outlived the call"
            time.sleep(0.05)
            conn.rollback()


@pytest.mark.mariadb
def test_mariadb_files_are_not_written(mariadb_sql_source: SqlSource, tmp_path: Path) -> None:
    engine = create_source_engine(mariadb_sql_source.url)
    target = Path(tempfile.gettempdir()) / f"ts_outfile_{secrets.token_hex(4)}"
    attempts = [
        f"SELECT 1 INTO OUTFILE '{target}'",
        f"SELECT 1 INTO DUMPFILE '{target}'",
        f"SELECT 1 INTO/**/OUTFILE '{target}'",
        f"SELECT '/*', 1 INTO/* */OUTFILE '{target}' -- */",
        f"SELECT 1 /*!INTO OUTFILE '{target}'*/",
        f"SELECT 1 /*M!100000 INTO OUTFILE '{target}'*/",
        f"(SELECT 1) INTO OUTFILE '{target}'",
        f"SELECT 1 # comment\nINTO OUTFILE '{target}'",
        "SELECT LOAD_FILE('/etc/hostname')",
    ]
    try:
        for sql in attempts:
            with pytest.raises(ExecutionRefused):
                execute_read_only(engine, sql, LIMITS)
        assert not target.exists()  # 0 files written
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_postgres_superuser_cannot_reach_out(postgres_sql_source: SqlSource) -> None:
    source = postgres_sql_source
    with source.admin.begin() as conn:
        conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS dblink")
        assert conn.exec_driver_sql("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").scalar()
    engine = create_source_engine(source.url)
    marker = Path(tempfile.gettempdir()) / f"ts_program_{secrets.token_hex(4)}"
    target = f"dbname={source.url.database} user=postgres host=127.0.0.1"
    delete = 'DELETE FROM "ORD_DTL_H"'
    session_attempts = [
        f"SELECT dblink_exec('{target}', '{delete}')",
        f"SELECT * FROM dblink('{target}', '{delete} RETURNING 1') AS t(x int)",
        f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'",
        f"SELECT lo_export(lo_from_bytea(0, 'x'), '{marker}')",
        "SELECT pg_read_file('/etc/hostname')",
        "SELECT * FROM pg_ls_dir('/')",
    ]
    text_attempts = [
        f"SELECT set_config('role', 'postgres', true), dblink_exec('{target}', '{delete}')",
        "SELECT set_config('session_authorization', 'postgres', true), pg_read_file('/etc/hostname')",
        f"SELECT U&\"\\0073et_config\"('role', 'postgres', true), dblink_exec('{target}', '{delete}')",
        f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'",
    ]
    before = content_digest(source.admin, "erp")
    try:
        for sql in session_attempts:
            _refused_or_failed(engine, sql, session_only=True)
            _refused_or_failed(engine, sql)
        for sql in text_attempts:
            with pytest.raises(ExecutionRefused):
                execute_read_only(engine, sql, LIMITS)
    finally:
        engine.dispose()
    assert content_digest(source.admin, "erp") == before  # 0 rows deleted
    assert not marker.exists()  # 0 programs run, 0 files written


def test_sqlite_process_wide_pragmas_never_run(sqlite_sql_source: SqlSource, tmp_path: Path) -> None:
    engine = create_source_engine(sqlite_sql_source.url)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (a INTEGER)")
        conn.execute("INSERT INTO t VALUES (1)")
    other_engine = create_source_engine(create_engine(f"sqlite:///{other}").url)
    attempts = [
        "PRAGMA hard_heap_limit = 1",
        "PRAGMA soft_heap_limit = 1",
        "PRAGMA threads = 8",
        "PRAGMA temp_store = MEMORY",
        "PRAGMA cache_size = -2000000",
        "PRAGMA mmap_size = 1000000000",
        "SELECT * FROM pragma_hard_heap_limit",
    ]
    try:
        for sql in attempts:
            _refused_or_failed(engine, sql, session_only=True)
            _refused_or_failed(engine, sql)
        assert execute_read_only(other_engine, "SELECT a FROM t", LIMITS).rows == [(1,)]
        assert execute_read_only(engine, 'SELECT count(*) FROM "CUST_MST"', LIMITS).rows[0][0] > 0
    finally:
        with sqlite3.connect(":memory:") as reset:  # never leave the test process crippled, should this fail
            reset.execute("PRAGMA hard_heap_limit = 0")
            reset.execute("PRAGMA soft_heap_limit = 0")
        engine.dispose()
        other_engine.dispose()


SQLITE_CATALOG = [
    "SELECT * FROM pragma_table_info('EMP_MST')",
    "SELECT name FROM pragma_table_info WHERE arg = 'EMP_MST'",
    "SELECT * FROM pragma_table_xinfo('EMP_MST')",
    "SELECT name FROM pragma_table_list",
    "SELECT * FROM pragma_index_list('EMP_MST')",
    "SELECT file FROM pragma_database_list",
    "SELECT name, path FROM dbstat",
    "SELECT sql FROM sqlite_master",
    "SELECT sql FROM sqlite_schema",
    "SELECT sql FROM sqlite_temp_master",
]


def test_sqlite_catalog_reads_need_a_grant(sqlite_sql_source: SqlSource) -> None:
    engine = create_source_engine(sqlite_sql_source.url)
    try:
        for sql in SQLITE_CATALOG:
            with pytest.raises(ExecutionRefused):
                run_read_only(engine, sql, LIMITS)
        names = execute_read_only(engine, "SELECT name FROM pragma_table_info('EMP_MST')", LIMITS, catalog=True)
        assert ("SAL_AMT",) in names.rows
        with pytest.raises(ExecutionRefused):  # a grant of catalog reads is no grant of pragmas that act
            run_read_only(engine, "PRAGMA hard_heap_limit = 1", LIMITS, catalog=True)
    finally:
        engine.dispose()


BOMBS = {
    "sqlite": ["SELECT zeroblob(900000000), zeroblob(900000000)", "SELECT printf('%.*c', 900000000, 'x')"],
    "postgres": ["SELECT repeat('x', 500000000)", "SELECT repeat('x', 100000000) AS a, repeat('y', 100000000) AS b"],
    "mariadb": ["SELECT REPEAT('x', 16000000)", "SELECT REPEAT('x', 8000000) AS a, REPEAT('y', 8000000) AS b"],
}


def _max_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_huge_values_never_reach_the_worker(sql_source: SqlSource, engine: Engine) -> None:
    before = _max_rss_bytes()
    for sql in BOMBS[sql_source.kind]:
        outcome: Fetched | str
        try:
            outcome = execute_read_only(engine, sql, SqlLimits(timeout_s=30))
        except ExecutionError as exc:
            outcome = str(exc)
        if isinstance(outcome, str):
            assert "larger than" in outcome  # SQLite refuses to build the value at all
            continue
        values = [v for v in outcome.rows[0] if v is not None]  # SQLite's printf gives NULL past its limit
        assert all(len(v) == MAX_CELL_CHARS + 1 for v in values)  # cut, with the mark
        assert outcome.cut_values == len(values)
    grown = _max_rss_bytes() - before
    assert grown < 150 * 1024 * 1024, f"the worker grew by {grown} bytes"


def test_cut_values_keep_their_types_and_are_counted(sql_source: SqlSource, engine: Engine) -> None:
    long = {"sqlite": "substr(hex(zeroblob(3000)), 1, 5000)", "postgres": "repeat('ab', 3000)"}
    expression = long.get(sql_source.kind, "REPEAT('ab', 3000)")
    fetched = execute_read_only(engine, f"SELECT 7 AS n, {expression} AS s, 'short' AS t", LIMITS)
    n, s, t = fetched.rows[0]
    assert (n, t) == (7, "short")
    assert len(s) == MAX_CELL_CHARS + 1
    assert s.endswith("…")
    assert fetched.cut_values == 1
    assert fetched.columns == ["n", "s", "t"]


@pytest.mark.postgres
def test_postgres_temporary_files_are_capped(postgres_sql_source: SqlSource) -> None:
    engine = create_source_engine(postgres_sql_source.url)
    cartesian = (
        "SELECT a.g, b.g FROM generate_series(1, 3000) AS a(g), generate_series(1, 3000) AS b(g)"
        " ORDER BY 1 DESC, 2 DESC"
    )
    recursive = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000) "
        "SELECT x FROM c ORDER BY x DESC"
    )
    try:
        for sql in (cartesian, recursive):
            started = time.monotonic()
            with pytest.raises(ExecutionError) as failed:
                execute_read_only(engine, sql, SqlLimits(timeout_s=30, temp_bytes=1024 * 1024))
            assert "needs more temporary space than the 1 MiB it may use" in str(failed.value)
            assert time.monotonic() - started < 20
    finally:
        engine.dispose()


@pytest.mark.mariadb
def test_mariadb_temporary_tables_are_capped(mariadb_sql_source: SqlSource) -> None:
    engine = create_source_engine(mariadb_sql_source.url)
    try:
        limits = SqlLimits(temp_bytes=2**21)
        sizes = run_read_only(engine, "SELECT @@tmp_table_size, @@max_heap_table_size, @@tmp_disk_table_size", limits)
        assert sizes.rows == [(2**21, 2**21, 2**21)]
        others = "SELECT @@max_recursive_iterations, @@max_join_size, @@group_concat_max_len"
        assert run_read_only(engine, others, limits).rows == [(4_294_967_295, 10_000_000_000, 8_000_000)]
    finally:
        engine.dispose()
