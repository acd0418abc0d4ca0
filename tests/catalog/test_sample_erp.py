"""The sample ERP fixture: deterministic, full of the intended traps, and identical on SQLite, MariaDB and PostgreSQL.

The server tests need MariaDB on 127.0.0.1:3306 (root, no password) and PostgreSQL on 127.0.0.1:5432 (postgres, trust);
they fail, not skip, when a server is down, because CI is expected to provide both.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import URL, create_engine, inspect, make_url
from sqlalchemy.exc import OperationalError

from catalog.sample_erp import DATABASES, build_sqlite, content_digest, load_into, metadata_for, row_counts
from catalog.sample_erp.rows import generate

REPO_ROOT = Path(__file__).resolve().parents[2]
MARIADB_SERVER = "mysql+pymysql://root@127.0.0.1:3306/"
POSTGRES_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
STALE_COPIES = {"ORD_MST_BAK": "ORD_MST", "ORD_MST_202312": "ORD_MST", "CUST_MST_TMP": "CUST_MST"}


def sqlite_url(path: Path) -> URL:
    return URL.create("sqlite", database=str(path))


def query(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(sql, params).fetchall()


def scalar(path: Path, sql: str, *params: object) -> object:
    return query(path, sql, *params)[0][0]


def count(path: Path, sql: str, *params: object) -> int:
    value = scalar(path, sql, *params)
    assert isinstance(value, int), value
    return value


def columns(path: Path, table: str) -> list[str]:
    return [str(row[1]) for row in query(path, f'PRAGMA table_info("{table}")')]


def dump_digest(path: Path) -> str:
    """SHA-256 of sqlite3's SQL dump: schema and every row, in storage order."""
    digest = hashlib.sha256()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        for line in conn.iterdump():
            digest.update(line.encode())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    # A directory that does not exist yet: build_sqlite creates it.
    return build_sqlite(tmp_path_factory.mktemp("sample") / "not" / "there")


@pytest.fixture(scope="module")
def digests(built: dict[str, Path]) -> dict[str, str]:
    return {name: content_digest(sqlite_url(path), name) for name, path in built.items()}


def test_every_value_is_stored_as_sqlalchemy_stores_its_type(built: dict[str, Path]) -> None:
    """The files are written over the DBAPI with each column type's own conversion: a reader through SQLAlchemy gets
    back the generated values, and a time keeps SQLAlchemy's SQLite text form (microseconds included)."""
    for name in DATABASES:
        generated = generate(20240630)[name]
        engine = create_engine(sqlite_url(built[name]))
        try:
            with engine.connect() as conn:
                for table in metadata_for(name).sorted_tables:
                    stored = [dict(row) for row in conn.execute(table.select().limit(1)).mappings()]
                    assert stored == generated[table.name][:1], table.name
        finally:
            engine.dispose()
    [(stamp, kind)] = query(built["erp"], 'SELECT "UPD_DTM", typeof("UPD_DTM") FROM "CUST_MST" LIMIT 1')
    assert kind == "text"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}", str(stamp))


def test_build_writes_both_databases(built: dict[str, Path]) -> None:
    assert sorted(built) == sorted(DATABASES)
    for name, path in built.items():
        assert path.name == f"{name}.sqlite"
        assert path.is_file()
    assert sorted(p.name for p in next(iter(built.values())).parent.iterdir()) == ["billing.sqlite", "erp.sqlite"]


def test_rebuild_in_another_process_is_identical(
    built: dict[str, Path], digests: dict[str, str], tmp_path: Path
) -> None:
    # A different hash seed catches any dependence on set or dict-of-str ordering; the stale files must be replaced.
    (tmp_path / "erp.sqlite").write_text("not a database")
    (tmp_path / "billing.sqlite").write_bytes(b"")
    script = "import sys, pathlib; from catalog.sample_erp import build_sqlite; build_sqlite(pathlib.Path(sys.argv[1]))"
    env = {**os.environ, "PYTHONHASHSEED": "4242", "PYTHONPATH": str(REPO_ROOT)}
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO_ROOT, env=env, check=True, timeout=300)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["billing.sqlite", "erp.sqlite"]
    for name in DATABASES:
        rebuilt = tmp_path / f"{name}.sqlite"
        assert content_digest(sqlite_url(rebuilt), name) == digests[name]
        assert dump_digest(rebuilt) == dump_digest(built[name])


def test_schema_matches_metadata(built: dict[str, Path]) -> None:
    for name, path in built.items():
        metadata = metadata_for(name)
        on_disk = {str(r[0]) for r in query(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert on_disk == set(metadata.tables)
        for table in metadata.tables.values():
            assert columns(path, table.name) == [c.name for c in table.columns]
    assert 15 <= len(metadata_for("erp").tables) <= 20


def test_tables_are_big_enough_to_profile(built: dict[str, Path]) -> None:
    erp = row_counts(sqlite_url(built["erp"]), "erp")
    billing = row_counts(sqlite_url(built["billing"]), "billing")
    assert erp["CUST_MST"] >= 1_500
    assert erp["PRD_MST"] >= 200
    assert erp["ORD_MST"] >= 15_000
    assert erp["ORD_DTL_H"] >= 40_000
    assert min(erp["RET_DTL"], erp["SHIP_HIST"], erp["SALES_2023"], erp["SALES_2024"]) > 0
    assert billing["BILL_CUST"] >= 1_500
    assert billing["INV_HDR"] >= 10_000
    assert all(rows > 0 for rows in (erp | billing).values())


@pytest.mark.parametrize(("copy", "live"), sorted(STALE_COPIES.items()))
def test_stale_copies_are_older_subsets(built: dict[str, Path], copy: str, live: str) -> None:
    path = built["erp"]
    key = "ORD_NO" if live == "ORD_MST" else "CUST_ID"
    date = "ORD_DT" if live == "ORD_MST" else "REG_DT"
    assert columns(path, copy) == columns(path, live)
    copied = count(path, f'SELECT COUNT(*) FROM "{copy}"')
    assert 0 < copied < count(path, f'SELECT COUNT(*) FROM "{live}"')
    orphans = f'SELECT COUNT(*) FROM "{copy}" c LEFT JOIN "{live}" l ON l.{key} = c.{key} WHERE l.{key} IS NULL'
    assert count(path, orphans) == 0
    assert count(path, f'SELECT COUNT(DISTINCT {key}) FROM "{copy}"') == copied
    newest_copied, newest_live = (str(scalar(path, f'SELECT MAX({date}) FROM "{t}"')) for t in (copy, live))
    assert newest_copied < newest_live
    # Copies carry no keys: nothing references them and they reference nothing.
    metadata = metadata_for("erp")
    assert not metadata.tables[copy].foreign_keys
    assert not metadata.tables[copy].primary_key.columns
    assert all(fk.column.table.name != copy for t in metadata.tables.values() for fk in t.foreign_keys)
    assert query(path, f'PRAGMA foreign_key_list("{copy}")') == []


def test_stale_copies_show_their_own_moment(built: dict[str, Path]) -> None:
    path = built["erp"]
    assert str(scalar(path, 'SELECT MAX(ORD_DT) FROM "ORD_MST_202312"')) == "2023-12-31"
    delivered_then = count(path, "SELECT COUNT(*) FROM ORD_MST_202312 WHERE STATUS_CODE = '40'")
    delivered_now = count(
        path,
        "SELECT COUNT(*) FROM ORD_MST o JOIN ORD_MST_202312 s ON s.ORD_NO = o.ORD_NO WHERE o.STATUS_CODE = '40'",
    )
    assert delivered_then < delivered_now
    edited = "SELECT COUNT(*) FROM CUST_MST_TMP t JOIN CUST_MST c ON c.CUST_ID = t.CUST_ID WHERE c.CUST_NM <> t.CUST_NM"
    assert count(path, edited) > 0


def test_sales_partitions_hold_disjoint_years(built: dict[str, Path]) -> None:
    path = built["erp"]
    assert columns(path, "SALES_2023") == columns(path, "SALES_2024")
    assert {r[0] for r in query(path, "SELECT DISTINCT substr(SALES_YM, 1, 4) FROM SALES_2023")} == {"2023"}
    assert {r[0] for r in query(path, "SELECT DISTINCT substr(SALES_YM, 1, 4) FROM SALES_2024")} == {"2024"}
    assert "SALES" not in metadata_for("erp").tables


def test_order_totals_equal_line_sums(built: dict[str, Path]) -> None:
    path = built["erp"]
    mismatches = """
        SELECT COUNT(*) FROM ORD_MST o
        LEFT JOIN (SELECT ORD_NO, SUM(AMT) AS total, COUNT(*) AS n FROM ORD_DTL_H GROUP BY ORD_NO) d
               ON d.ORD_NO = o.ORD_NO
        WHERE d.n IS NULL OR ABS(o.TOT_AMT - d.total) > 0.001
    """
    assert count(path, mismatches) == 0
    assert count(path, "SELECT COUNT(*) FROM ORD_DTL_H WHERE AMT <= 0 OR QTY <= 0") == 0


def test_every_code_has_a_meaning(built: dict[str, Path]) -> None:
    path = built["erp"]
    for table in ("ORD_MST", "ORD_MST_BAK", "ORD_MST_202312"):
        unknown = f"""SELECT DISTINCT STATUS_CODE FROM "{table}"
                      WHERE STATUS_CODE NOT IN (SELECT CODE_CD FROM CODE_DTL WHERE CODE_GRP = 'ORD_STAT')"""
        assert query(path, unknown) == []
    used = {r[0] for r in query(path, "SELECT DISTINCT STATUS_CODE FROM ORD_MST")}
    assert {"10", "20", "30", "40", "90"} <= used
    for column, group in (("CUST_GRD_CD", "CUST_GRD"), ("REGION_CD", "REGION")):
        unknown = f"""SELECT DISTINCT {column} FROM CUST_MST
                      WHERE {column} NOT IN (SELECT CODE_CD FROM CODE_DTL WHERE CODE_GRP = '{group}')"""
        assert query(path, unknown) == []


def test_sign_and_string_date_traps(built: dict[str, Path]) -> None:
    path = built["erp"]
    assert count(path, "SELECT COUNT(*) FROM RET_DTL") > 0
    assert count(path, "SELECT COUNT(*) FROM RET_DTL WHERE RET_AMT >= 0 OR RET_QTY <= 0") == 0
    ship_dates = [str(r[0]) for r in query(path, "SELECT SHIP_DT FROM SHIP_HIST")]
    assert all(re.fullmatch(r"20(22|23|24)(0[1-9]|1[0-2])[0-3]\d", d) for d in ship_dates)
    assert count(path, "SELECT COUNT(*) FROM SHIP_HIST WHERE typeof(SHIP_DT) <> 'text'") == 0


def test_comments_are_sparse_and_foreign_keys_declared_on_live_tables() -> None:
    erp = metadata_for("erp")
    assert erp.tables["CUST_MST"].comment
    assert "ORD_STAT" in str(erp.tables["ORD_MST"].c.STATUS_CODE.comment)
    all_columns = [c for t in erp.tables.values() for c in t.columns]
    assert 0 < sum(1 for c in all_columns if c.comment) < len(all_columns) / 10
    targets = {(t.name, fk.parent.name, fk.target_fullname) for t in erp.tables.values() for fk in t.foreign_keys}
    assert ("ORD_MST", "CUST_ID", "CUST_MST.CUST_ID") in targets
    assert ("ORD_DTL_H", "ORD_NO", "ORD_MST.ORD_NO") in targets
    assert ("ORD_DTL_H", "PRD_CD", "PRD_MST.PRD_CD") in targets


def test_billing_customers_point_at_erp_customers(built: dict[str, Path]) -> None:
    with contextlib.closing(sqlite3.connect(built["billing"])) as conn:
        conn.execute("ATTACH DATABASE ? AS erp", (str(built["erp"]),))
        total, linked, dangling = conn.execute(
            """SELECT COUNT(*), COUNT(b.ERP_CUST_ID), SUM(b.ERP_CUST_ID IS NOT NULL AND c.CUST_ID IS NULL)
               FROM BILL_CUST b LEFT JOIN erp.CUST_MST c ON c.CUST_ID = b.ERP_CUST_ID"""
        ).fetchone()
        supply_mismatch = conn.execute(
            """SELECT COUNT(*) FROM INV_HDR i JOIN erp.ORD_MST o ON o.ORD_NO = i.ERP_ORD_NO
               WHERE ABS(i.SUPPLY_AMT - o.TOT_AMT) > 0.001"""
        ).fetchone()[0]
    assert dangling == 0
    assert linked >= 0.85 * total
    assert supply_mismatch == 0


def test_unknown_database_name_is_rejected_before_connecting() -> None:
    with pytest.raises(ValueError, match=r"erp, billing"):
        metadata_for("crm")
    with pytest.raises(ValueError, match=r"'crm'"):
        load_into("postgresql+psycopg://nobody@127.0.0.1:1/none", "crm")
    with pytest.raises(ValueError, match=r"erp, billing"):
        row_counts("sqlite://", "crm")


@pytest.mark.parametrize(
    ("url", "driver_module"),
    [
        ("postgresql+psycopg://postgres@127.0.0.1:1/none", "psycopg"),
        ("mysql+pymysql://root@127.0.0.1:1/none", "pymysql"),
    ],
)
def test_unreachable_server_raises_the_driver_error(url: str, driver_module: str) -> None:
    with pytest.raises(OperationalError) as caught:
        load_into(url, "billing")
    assert type(caught.value.orig).__module__.startswith(driver_module)
    assert str(caught.value.orig) in str(caught.value)


@contextlib.contextmanager
def scratch_database(server_url: str, create: str, drop: str) -> Iterator[URL]:
    name = f"ts_sample_{secrets.token_hex(6)}"
    server = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with server.connect() as conn:
            conn.exec_driver_sql(create.format(name=name))
    except OperationalError as exc:
        server.dispose()
        pytest.fail(f"cannot reach the database server at {server_url} (CI must start it): {exc}")
    try:
        yield make_url(server_url).set(database=name)
    finally:
        with server.connect() as conn:
            conn.exec_driver_sql(drop.format(name=name))
        server.dispose()


@pytest.fixture
def mariadb_url() -> Iterator[URL]:
    with scratch_database(
        MARIADB_SERVER, "CREATE DATABASE `{name}` CHARACTER SET utf8mb4", "DROP DATABASE IF EXISTS `{name}`"
    ) as url:
        yield url


@pytest.fixture
def postgres_url() -> Iterator[URL]:
    with scratch_database(
        POSTGRES_SERVER, 'CREATE DATABASE "{name}"', 'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
    ) as url:
        yield url


def assert_server_copy_matches(url: URL, built: dict[str, Path], digests: dict[str, str]) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE keep_me (id INTEGER PRIMARY KEY)")
        for name in DATABASES:
            load_into(url, name)
            assert row_counts(engine, name) == row_counts(sqlite_url(built[name]), name)
            assert content_digest(engine, name) == digests[name]
        # Loading again replaces the sample's tables (no duplicate rows, no FK errors) and leaves others alone.
        load_into(url, "billing")
        assert content_digest(engine, "billing") == digests["billing"]
        tables = set(inspect(engine).get_table_names())
        assert tables == {"keep_me"} | {t for name in DATABASES for t in metadata_for(name).tables}
    finally:
        engine.dispose()


@pytest.mark.mariadb
def test_mariadb_copy_matches_sqlite(mariadb_url: URL, built: dict[str, Path], digests: dict[str, str]) -> None:
    assert_server_copy_matches(mariadb_url, built, digests)


@pytest.mark.postgres
def test_postgres_copy_matches_sqlite(postgres_url: URL, built: dict[str, Path], digests: dict[str, str]) -> None:
    assert_server_copy_matches(postgres_url, built, digests)
