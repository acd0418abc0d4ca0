"""The read-only executor on its own, with the guard bypassed: writes of every kind fail on SQLite, MariaDB and
PostgreSQL and leave the data as it was, both in the engine's session alone (`run_read_only`, no text check) and
through the executor's text check; huge results come back capped with bounded memory; slow statements are
cancelled at the timeout and the engine stays usable."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from catalog.sample_erp.digest import content_digest
from tests.workers.sql.conftest import SqlSource
from workers.sql.engines import create_source_engine
from workers.sql.limits import SqlLimits
from workers.sql.readonly import ExecutionError, ExecutionTimeout, execute_read_only, run_read_only

WRITES = {
    "common": [
        "INSERT INTO {CUST_MST} ({CUST_ID}, {CUST_NM}, {REG_DT}, {USE_YN}) VALUES ('ZZ1', 'x', '2024-01-01', 'Y')",
        "UPDATE {ORD_MST} SET {TOT_AMT} = 0",
        "DELETE FROM {ORD_DTL_H}",
        "CREATE TABLE ts_new (a INTEGER)",
        "CREATE TABLE ts_copy AS SELECT * FROM {ORD_MST}",
        "DROP TABLE {ORD_MST_BAK}",
        "DROP VIEW {V_ORDERS}",
        "ALTER TABLE {ORD_MST} ADD COLUMN ts_x INTEGER",
        "CREATE INDEX ts_ix ON {ORD_MST} ({TOT_AMT})",
        "CREATE VIEW ts_v AS SELECT 1 AS a",
    ],
    "sqlite": [
        "REPLACE INTO {CUST_MST} ({CUST_ID}, {CUST_NM}, {REG_DT}, {USE_YN}) VALUES ('ZZ1', 'x', '2024-01-01', 'Y')",
        "ATTACH DATABASE '{directory}/ts_attached.sqlite' AS other",
        "VACUUM",
        "PRAGMA user_version = 7",
        "CREATE TEMP TABLE ts_tmp AS SELECT * FROM {EMP_MST}",
    ],
    "mariadb": [
        "TRUNCATE TABLE {ORD_DTL_H}",
        "REPLACE INTO {CUST_MST} ({CUST_ID}, {CUST_NM}, {REG_DT}, {USE_YN}) VALUES ('ZZ1', 'x', '2024-01-01', 'Y')",
        "RENAME TABLE {ORD_MST_BAK} TO ts_renamed",
        "SELECT 1; DELETE FROM {ORD_DTL_H}",
        "CREATE DATABASE ts_created_by_sql",
    ],
    "postgres": [
        "TRUNCATE TABLE {ORD_DTL_H}",
        "WITH d AS (DELETE FROM {ORD_DTL_H} RETURNING *) SELECT count(*) FROM d",
        "SELECT 1; DELETE FROM {ORD_DTL_H}",
        "COMMIT; DELETE FROM {ORD_DTL_H}",
        "CREATE SCHEMA ts_schema",
        "SELECT * INTO ts_into FROM {ORD_MST}",
        "GRANT SELECT ON {EMP_MST} TO PUBLIC",
        "COMMENT ON TABLE {ORD_MST} IS 'changed'",
    ],
}
QUOTED = (
    "CUST_MST",
    "CUST_ID",
    "CUST_NM",
    "REG_DT",
    "USE_YN",
    "ORD_MST",
    "TOT_AMT",
    "ORD_DTL_H",
    "ORD_MST_BAK",
    "V_ORDERS",
    "EMP_MST",
)


@pytest.fixture(scope="module")
def engine(sql_source: SqlSource) -> Iterator[Engine]:
    created = create_source_engine(sql_source.url)
    yield created
    created.dispose()


def _sql(source: SqlSource, template: str) -> str:
    quote = source.admin.dialect.identifier_preparer.quote_identifier
    directory = str(source.url.database or "").rsplit("/", 1)[0]
    return template.format(directory=directory, **{name: quote(name) for name in QUOTED})


def _shape(source: SqlSource) -> list[str]:
    """Names of the tables and views, so that a created or dropped object shows."""
    queries = {
        "sqlite": "SELECT type || ':' || name FROM sqlite_master ORDER BY 1",
        "mariadb": "SELECT CONCAT(TABLE_TYPE, ':', TABLE_NAME) FROM information_schema.TABLES"
        " WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1",
        "postgres": "SELECT CAST(c.relkind AS text) || ':' || n.nspname || '.' || c.relname FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
        " AND n.nspname NOT LIKE 'pg_toast%' ORDER BY 1",
    }
    with source.admin.connect() as conn:
        shape = [str(row[0]) for row in conn.execute(text(queries[source.kind]))]
        if source.kind == "mariadb":
            shape += [str(r[0]) for r in conn.exec_driver_sql("SHOW DATABASES LIKE 'ts_created_by_sql'")]
        if source.kind == "postgres":
            shape += [
                str(r[0]) for r in conn.exec_driver_sql("SELECT nspname FROM pg_namespace WHERE nspname = 'ts_schema'")
            ]
    return shape


def test_every_kind_of_write_fails_and_changes_nothing(sql_source: SqlSource, engine: Engine) -> None:
    before_data = content_digest(sql_source.admin, "erp")
    before_shape = _shape(sql_source)
    for template in [*WRITES["common"], *WRITES[sql_source.kind]]:
        sql = _sql(sql_source, template)
        with pytest.raises(ExecutionError) as failed:
            run_read_only(engine, sql, SqlLimits(timeout_s=10))
        assert str(failed.value), sql
        with pytest.raises(ExecutionError):
            execute_read_only(engine, sql, SqlLimits(timeout_s=10))
    assert content_digest(sql_source.admin, "erp") == before_data
    assert _shape(sql_source) == before_shape
    # The engine still answers queries afterwards.
    fetched = execute_read_only(engine, _sql(sql_source, "SELECT count(*) FROM {ORD_MST}"), SqlLimits())
    assert fetched.rows == [(20000,)]


def test_the_engine_names_read_only_as_the_reason(sql_source: SqlSource, engine: Engine) -> None:
    sql = _sql(sql_source, "DELETE FROM {ORD_DTL_H}")
    with pytest.raises(ExecutionError) as failed:
        run_read_only(engine, sql, SqlLimits())
    reason = str(failed.value).lower()
    assert "read-only" in reason or "read only" in reason or "readonly" in reason


def test_ten_million_rows_come_back_capped_quickly_with_bounded_memory(sql_source: SqlSource, engine: Engine) -> None:
    tracemalloc.start()
    started = time.monotonic()
    try:
        fetched = execute_read_only(engine, sql_source.big_sql, SqlLimits(max_rows=200, timeout_s=30))
        elapsed = time.monotonic() - started
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(fetched.rows) == 200
    assert fetched.truncated
    assert [row[0] for row in fetched.rows[:3]] == [1, 2, 3]
    assert elapsed < 10, f"took {elapsed:.1f} s"
    assert peak < 20 * 1024 * 1024, f"peak {peak} bytes"
    # The connection that held unread rows is not reused half-read.
    assert execute_read_only(engine, "SELECT 1", SqlLimits()).rows == [(1,)]


def test_byte_budget_truncates_and_long_values_are_cut(sql_source: SqlSource, engine: Engine) -> None:
    sql = _sql(sql_source, "SELECT {CUST_ID}, {CUST_NM} FROM {CUST_MST} ORDER BY {CUST_ID}")
    fetched = execute_read_only(engine, sql, SqlLimits(max_rows=1000, max_bytes=500))
    assert fetched.truncated
    assert 0 < len(fetched.rows) < 100
    assert sum(len(str(v)) for row in fetched.rows for v in row) <= 500
    repeat = {"sqlite": "replace(hex(zeroblob(5000)), '0', 'ab')", "mariadb": "REPEAT('ab', 5000)"}
    long_sql = f"SELECT {repeat.get(sql_source.kind, 'repeat(' + repr('ab') + ', 5000)')} AS v"
    (value,) = execute_read_only(engine, long_sql, SqlLimits()).rows[0]
    assert len(value) == 2001
    assert value.endswith("…")


@pytest.mark.parametrize("which", ["slow_sql", "sleep_sql"])
def test_slow_statements_are_cancelled_at_the_timeout(sql_source: SqlSource, engine: Engine, which: str) -> None:
    started = time.monotonic()
    with pytest.raises(ExecutionTimeout):
        execute_read_only(engine, getattr(sql_source, which), SqlLimits(timeout_s=1.0))
    assert time.monotonic() - started < 1.0 + 5
    fetched = execute_read_only(engine, _sql(sql_source, "SELECT count(*) FROM {CUST_MST}"), SqlLimits())
    assert fetched.rows[0][0] > 0


def test_errors_are_the_engines_first_line(sql_source: SqlSource, engine: Engine) -> None:
    with pytest.raises(ExecutionError) as failed:
        execute_read_only(engine, _sql(sql_source, "SELECT ORD_AMT_X FROM {ORD_MST}"), SqlLimits())
    message = str(failed.value)
    assert "ORD_AMT_X".lower() in message.lower()
    assert "\n" not in message
    assert execute_read_only(engine, "SELECT 2", SqlLimits()).rows == [(2,)]
