"""The guard refuses what reveals the catalog on every engine (system tables, SQLite's table-valued pragmas and
dbstat, PostgreSQL object-identifier casts, MariaDB system variables) unless the role grants catalog reads."""

from __future__ import annotations

import pytest

from workers.sql.guard import SqlRefused, check_query

CATALOG_READS = [
    ("sqlite", "SELECT * FROM pragma_table_info('EMP_MST')"),
    ("sqlite", "SELECT name FROM pragma_table_info WHERE arg = 'EMP_MST'"),
    ("sqlite", "SELECT * FROM pragma_table_xinfo('EMP_MST')"),
    ("sqlite", "SELECT name FROM pragma_table_list"),
    ("sqlite", "SELECT * FROM main.pragma_table_list"),
    ("sqlite", "SELECT * FROM pragma_index_info('sqlite_autoindex_EMP_MST_1')"),
    ("sqlite", "SELECT file FROM pragma_database_list"),
    ("sqlite", "SELECT name, path FROM dbstat"),
    ("sqlite", "SELECT sql FROM sqlite_master"),
    ("sqlite", "SELECT sql FROM sqlite_schema"),
    ("sqlite", "SELECT o.ORD_NO FROM ORD_MST o JOIN pragma_table_list t ON t.name = o.ORD_NO"),
    ("postgres", "SELECT CAST('emp_mst' AS regclass)"),
    ("postgres", "SELECT 'public.\"EMP_MST\"'::regclass"),
    ("postgres", "SELECT 'x'::text::regclass::oid"),
    ("postgres", "SELECT CAST('x' AS pg_catalog.regclass)"),
    ("postgres", "SELECT 'int4'::regtype, 'public'::regnamespace"),
    ("postgres", "SELECT to_regclass('emp_mst')"),
    ("postgres", "SELECT count(*) FROM pg_class"),
    ("postgres", "SELECT * FROM information_schema.columns"),
    ("mysql", "SELECT @@datadir"),
    ("mysql", "SELECT @@version"),
    ("mysql", "SELECT @@global.secure_file_priv"),
    ("mysql", "SELECT @@session.tx_read_only"),
    ("mysql", "SELECT `ORD_NO` FROM `ORD_MST` WHERE @@hostname IS NOT NULL"),
    ("mysql", "SELECT * FROM information_schema.TABLES"),
    ("mysql", "SELECT * FROM mysql.user"),
    ("mysql", "SELECT * FROM performance_schema.threads"),
]


@pytest.mark.parametrize(("dialect", "sql"), CATALOG_READS)
def test_catalog_reads_are_refused_without_a_grant(dialect: str, sql: str) -> None:
    with pytest.raises(SqlRefused) as refused:
        check_query(sql, dialect)
    assert str(refused.value).startswith("refused:")
    assert "EMP_MST" not in str(refused.value) or "EMP_MST" in sql


@pytest.mark.parametrize(("dialect", "sql"), [c for c in CATALOG_READS if "to_regclass" not in c[1]])
def test_a_catalog_grant_lets_catalog_reads_through(dialect: str, sql: str) -> None:
    check_query(sql, dialect, catalog=True)


def test_the_function_allowlist_still_holds_with_a_catalog_grant() -> None:
    with pytest.raises(SqlRefused):
        check_query("SELECT pg_sleep(5) FROM pg_class", "postgres", catalog=True)
    with pytest.raises(SqlRefused):
        check_query("SELECT load_extension('x') FROM pragma_table_list", "sqlite", catalog=True)


def test_ordinary_casts_and_names_pass() -> None:
    check_query("SELECT CAST(TOT_AMT AS numeric(14, 2)), ORD_NO::text FROM ORD_MST", "postgres")
    check_query("SELECT CAST(TOT_AMT AS DECIMAL(14, 2)) FROM ORD_MST", "mysql")
    assert [t.name for t in check_query("SELECT * FROM pragmatic_notes", "sqlite").tables] == ["pragmatic_notes"]
