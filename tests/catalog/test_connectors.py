"""Connectors against real SQLite, MariaDB and PostgreSQL copies of the sample ERP, plus awkward scratch objects.

The server tests need MariaDB on 127.0.0.1:3306 (root, no password) and PostgreSQL on 127.0.0.1:5432 (postgres, trust);
each module run creates its own scratch databases and drops them at the end. A server that is down fails the tests
rather than skipping them, because CI is expected to provide both.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import (
    URL,
    Column,
    Engine,
    Integer,
    LargeBinary,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    create_engine,
    make_url,
    text,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.exc import DBAPIError, OperationalError

from catalog.connectors import GenericConnector, SourceTimeout, TableRef, open_connector
from catalog.sample_erp import load_into, metadata_for
from core.errors import SourceError
from tests.support import MARIADB_SERVER, POSTGRES_SERVER, sample_databases

ENGINES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("mariadb", id="mariadb", marks=pytest.mark.mariadb),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]
AWKWARD = ("select", "Order Details", "주문", 'we"ird')
AWKWARD_COLUMNS = ("from", "Unit Price", "수량")
AWKWARD_ROWS = 300
LONG_TEXT = "ab가" * 350_000  # over a million characters, multi-byte in UTF-8
LONG_BYTES = bytes(range(256)) * 4096  # 1 MiB

# Slow and broken views, per engine: a view that runs for minutes, one over a table dropped after it was created
# (or, on PostgreSQL, over a function that raises).
SCRATCH_SQL = {
    "sqlite": [
        "CREATE VIEW slow_view AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000)"
        " SELECT count(*) AS n FROM c",
        "CREATE TABLE gone (a INTEGER)",
        "CREATE VIEW broken_view AS SELECT a FROM gone",
        "DROP TABLE gone",
    ],
    "mariadb": [
        "CREATE VIEW slow_view AS SELECT SLEEP(60) AS n",
        "CREATE TABLE gone (a INTEGER)",
        "CREATE VIEW broken_view AS SELECT a FROM gone",
        "DROP TABLE gone",
    ],
    "postgres": [
        "CREATE VIEW slow_view AS SELECT 1 AS n FROM pg_sleep(60)",
        "CREATE FUNCTION boom() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$",
        "CREATE VIEW broken_view AS SELECT boom() AS a",
        "CREATE TABLE sales_p (id integer, yr text) PARTITION BY LIST (yr)",
        "CREATE TABLE sales_p_2023 PARTITION OF sales_p FOR VALUES IN ('2023')",
        "CREATE TABLE sales_p_2024 PARTITION OF sales_p FOR VALUES IN ('2024')",
        "INSERT INTO sales_p SELECT g, CASE WHEN mod(g, 2) = 0 THEN '2023' ELSE '2024' END"
        " FROM generate_series(1, 100) g",
    ],
}


@dataclass
class Source:
    kind: str
    url: URL
    admin: Engine  # a read-write engine for setting up and checking, never the connector's


def awkward_metadata() -> MetaData:
    md = MetaData()
    for name in AWKWARD:
        Table(
            name,
            md,
            Column("from", Integer, primary_key=True, autoincrement=False),
            Column("Unit Price", Numeric(10, 2)),
            Column("수량", Integer),
            mysql_charset="utf8mb4",
        )
    Table("EMPTY_T", md, Column("ID", Integer, primary_key=True), Column("NM", String(20)), mysql_charset="utf8mb4")
    Table(
        "BIG_VALUES",
        md,
        Column("ID", Integer, primary_key=True, autoincrement=False),
        Column("BODY", Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")),
        Column("DATA", LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")),
        mysql_charset="utf8mb4",
    )
    return md


def add_scratch_objects(kind: str, admin: Engine) -> None:
    md = awkward_metadata()
    with admin.begin() as conn:
        md.create_all(conn)
        for name in AWKWARD:
            rows = [{"from": i, "Unit Price": i / 4, "수량": i % 7} for i in range(1, AWKWARD_ROWS + 1)]
            conn.execute(md.tables[name].insert(), rows)
        conn.execute(md.tables["BIG_VALUES"].insert(), [{"ID": 1, "BODY": LONG_TEXT, "DATA": LONG_BYTES}])
        for statement in SCRATCH_SQL[kind]:
            conn.exec_driver_sql(statement)
    # Statistics as a DBA's maintenance would leave them; the connector itself never writes.
    with admin.begin() as conn:
        if kind == "mariadb":
            names = [*metadata_for("erp").tables, *md.tables]
            conn.exec_driver_sql("ANALYZE TABLE " + ", ".join(f"`{n}`" for n in names))
        elif kind == "postgres":
            conn.exec_driver_sql("ANALYZE")


@pytest.fixture(scope="module")
def sqlite_source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Source]:
    path = sample_databases(tmp_path_factory.mktemp("connectors"))["erp"]
    url = URL.create("sqlite", database=str(path))
    admin = create_engine(url)
    add_scratch_objects("sqlite", admin)
    yield Source("sqlite", url, admin)
    admin.dispose()


def server_source(kind: str, server_url: str, create: str, drop: str) -> Iterator[Source]:
    name = f"ts_conn_{secrets.token_hex(6)}"
    server = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with server.connect() as conn:
            conn.exec_driver_sql(create.format(name=name))
    except OperationalError as exc:
        server.dispose()
        pytest.fail(f"cannot reach the database server at {server_url} (CI must start it): {exc}")
    url = make_url(server_url).set(database=name)
    admin = create_engine(url)
    try:
        load_into(url, "erp")
        add_scratch_objects(kind, admin)
        yield Source(kind, url, admin)
    finally:
        admin.dispose()
        with server.connect() as conn:
            conn.exec_driver_sql(drop.format(name=name))
        server.dispose()


@pytest.fixture(scope="module")
def mariadb_source() -> Iterator[Source]:
    yield from server_source(
        "mariadb", MARIADB_SERVER, "CREATE DATABASE `{name}` CHARACTER SET utf8mb4", "DROP DATABASE IF EXISTS `{name}`"
    )


@pytest.fixture(scope="module")
def postgres_source() -> Iterator[Source]:
    yield from server_source(
        "postgres", POSTGRES_SERVER, 'CREATE DATABASE "{name}"', 'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
    )


@pytest.fixture(scope="module", params=ENGINES)
def source(request: pytest.FixtureRequest) -> Source:
    found: Source = request.getfixturevalue(f"{request.param}_source")
    return found


@pytest.fixture(scope="module")
def connector(source: Source) -> Iterator[GenericConnector]:
    opened = open_connector(source.url)
    assert isinstance(opened, GenericConnector)
    yield opened
    opened.close()


def ref(name: str, kind: str = "table") -> TableRef:
    return TableRef(None, name, "view" if kind == "view" else "table")


def admin_scalar(source: Source, sql: str) -> object:
    """Run `sql` through the admin engine, with {Name} placeholders quoted as the engine needs."""
    return admin_rows(source, sql)[0][0]


def admin_rows(source: Source, sql: str) -> list[tuple[object, ...]]:
    quote = source.admin.dialect.identifier_preparer.quote_identifier
    names = {"ORD_MST", "CUST_MST", "CUST_ID", "CODE_DTL", "SORT_ORD", "ts_write_probe"}
    with source.admin.connect() as conn:
        return [tuple(row) for row in conn.execute(text(sql.format(**{n: quote(n) for n in names})))]


def test_lists_every_erp_table_and_the_scratch_views(connector: GenericConnector) -> None:
    refs = connector.list_tables()
    tables = {r.name for r in refs if r.kind == "table" and r.schema is None}
    assert set(metadata_for("erp").tables) <= tables
    assert len(metadata_for("erp").tables) == 18
    assert set(AWKWARD) | {"EMPTY_T", "BIG_VALUES"} <= tables
    assert {"slow_view", "broken_view"} <= {r.name for r in refs if r.kind == "view"}
    assert connector.engine in ("sqlite", "mariadb", "postgresql")
    assert connector.version[0].isdigit()


def test_describe_reads_keys_comments_and_the_row_estimate(source: Source, connector: GenericConnector) -> None:
    info = connector.describe(ref("ORD_MST"))
    assert info.primary_key == ("ORD_NO",)
    fk = next(fk for fk in info.foreign_keys if fk.ref_table == "CUST_MST")
    assert (fk.columns, fk.ref_schema, fk.ref_columns) == (("CUST_ID",), None, ("CUST_ID",))
    columns = {c.name: c for c in info.columns}
    assert columns["ORD_NO"].family == "text"
    assert columns["ORD_NO"].max_length == 20
    assert columns["ORD_DT"].family == "date"
    assert not columns["ORD_DT"].nullable
    assert columns["TOT_AMT"].family == "decimal"
    if source.kind != "sqlite":  # SQLite keeps no comments
        assert "ORD_STAT" in str(columns["STATUS_CODE"].comment)
    assert info.row_estimate is not None
    assert 10_000 <= info.row_estimate <= 30_000
    assert connector.exact_count(ref("ORD_MST")) == admin_scalar(source, "SELECT COUNT(*) FROM {ORD_MST}")


def test_large_table_is_sampled_spread_and_deterministically(source: Source, connector: GenericConnector) -> None:
    columns = ["ORD_NO", "LINE_NO", "AMT"]
    first = connector.sample(ref("ORD_DTL_H"), columns, 1000)
    assert first.columns == tuple(columns)
    assert 500 <= len(first.rows) <= 1000
    assert not first.complete
    assert first.method != "whole"
    expected = {"sqlite": "rowid", "postgres": "tablesample", "mariadb": "limit"}[source.kind]
    assert first.method.startswith(expected)
    if first.method != "limit":  # spread over the table: orders of more than one year
        assert len({str(row[0])[1:5] for row in first.rows}) >= 2
    assert connector.sample(ref("ORD_DTL_H"), columns, 1000).rows == first.rows
    other = open_connector(source.url)
    try:
        assert other.sample(ref("ORD_DTL_H"), columns, 1000).rows == first.rows
    finally:
        other.close()


def test_small_table_is_read_whole(connector: GenericConnector) -> None:
    sample = connector.sample(ref("CODE_DTL"), ["CODE_GRP", "CODE_CD", "CODE_NM"], 1000)
    assert sample.complete
    assert sample.method == "whole"
    assert len(sample.rows) == connector.exact_count(ref("CODE_DTL"))


def test_count_present_counts_real_values_only(source: Source, connector: GenericConnector) -> None:
    real = [row[0] for row in admin_rows(source, "SELECT {CUST_ID} FROM {CUST_MST} ORDER BY 1 LIMIT 7")]
    assert len(real) == 7
    values = [*real, *real[:3], "NO_SUCH_1", "NO_SUCH_2", None, 12345]
    assert connector.count_present(ref("CUST_MST"), "CUST_ID", values) == 7
    assert connector.count_present(ref("CUST_MST"), "CUST_ID", []) == 0
    many = [f"X{i:06d}" for i in range(1_200)] + real  # more than one IN batch
    assert connector.count_present(ref("CUST_MST"), "CUST_ID", many) == 7
    # A lookup of text into an integer column neither fails nor matches what cannot be a number.
    assert connector.count_present(ref("ORD_DTL_H"), "LINE_NO", ["1", "2", "two", 1]) == 2


def test_writes_through_the_connector_fail(source: Source, connector: GenericConnector) -> None:
    quote = source.admin.dialect.identifier_preparer.quote_identifier
    attempts = [
        "CREATE TABLE {ts_write_probe} (a integer)",
        "UPDATE {CODE_DTL} SET {SORT_ORD} = 0",
        "DELETE FROM {CODE_DTL}",
    ]
    before = admin_rows(source, "SELECT {SORT_ORD} FROM {CODE_DTL} ORDER BY 1")
    for statement in attempts:
        sql = text(statement.format(**{n: quote(n) for n in ("ts_write_probe", "CODE_DTL", "SORT_ORD")}))
        with connector.sa_engine.begin() as conn, pytest.raises(DBAPIError):
            conn.execute(sql)
    assert admin_rows(source, "SELECT {SORT_ORD} FROM {CODE_DTL} ORDER BY 1") == before
    assert "ts_write_probe" not in {r.name for r in connector.list_tables()}


def test_slow_statement_is_cancelled(source: Source) -> None:
    quick = open_connector(source.url, statement_timeout_s=1)
    try:
        started = time.monotonic()
        with pytest.raises(SourceTimeout, match="slow_view"):
            quick.sample(ref("slow_view", "view"), ["n"], 10)
        assert time.monotonic() - started < 5
        # The connection that timed out is usable again.
        assert quick.exact_count(ref("CODE_MST")) > 0
    finally:
        quick.close()


def test_awkward_identifiers_are_described_and_sampled(connector: GenericConnector) -> None:
    for name in AWKWARD:
        info = connector.describe(ref(name))
        assert tuple(c.name for c in info.columns) == AWKWARD_COLUMNS
        assert info.primary_key == ("from",)
        sample = connector.sample(ref(name), list(AWKWARD_COLUMNS), 50)
        assert 25 <= len(sample.rows) <= 50, sample.method
        assert not sample.complete
        assert all(0 < row[0] <= AWKWARD_ROWS for row in sample.rows)
        assert connector.exact_count(ref(name)) == AWKWARD_ROWS
        assert connector.count_present(ref(name), "from", [1, 2, AWKWARD_ROWS + 1]) == 2
    if connector.engine == "mariadb":  # a single integer key: read in runs through the key's index
        assert connector.sample(ref("select"), list(AWKWARD_COLUMNS), 50).method == "key-ranges"


def test_empty_table_and_long_values(connector: GenericConnector) -> None:
    empty = connector.sample(ref("EMPTY_T"), ["ID", "NM"], 100)
    assert empty.rows == []
    assert empty.complete
    assert connector.exact_count(ref("EMPTY_T")) == 0
    big = connector.sample(ref("BIG_VALUES"), ["ID", "BODY", "DATA"], 10)
    assert big.complete
    ((row_id, body, data),) = big.rows
    assert row_id == 1
    assert body == LONG_TEXT[:256]
    assert bytes(data) == LONG_BYTES[:64]


def test_a_broken_view_fails_alone(connector: GenericConnector) -> None:
    view = ref("broken_view", "view")
    info = connector.describe(view)
    with pytest.raises(SourceError) as caught:
        connector.sample(view, [c.name for c in info.columns] or ["a"], 10)
    assert not isinstance(caught.value, SourceTimeout)
    assert connector.sample(ref("CODE_MST"), ["CODE_GRP"], 10).rows


@pytest.mark.postgres
def test_postgres_declared_partitions(postgres_source: Source) -> None:
    opened = open_connector(postgres_source.url)
    try:
        refs = {r.name: r for r in opened.list_tables()}
        assert refs["sales_p"].kind == "table"
        assert opened.describe(refs["sales_p"]).partition_of is None
        assert opened.describe(refs["sales_p"]).row_estimate == 100
        for part in ("sales_p_2023", "sales_p_2024"):
            assert opened.describe(refs[part]).partition_of == "sales_p"
        assert len(opened.sample(refs["sales_p"], ["id", "yr"], 1000).rows) == 100
    finally:
        opened.close()


def test_generic_connector_introspects_and_samples_with_limit(sqlite_source: Source) -> None:
    generic = GenericConnector(sqlite_source.url)
    try:
        assert generic.engine == "sqlite"
        assert set(metadata_for("erp").tables) <= {r.name for r in generic.list_tables()}
        info = generic.describe(ref("ORD_MST"))
        assert info.primary_key == ("ORD_NO",)
        assert info.row_estimate is None
        sample = generic.sample(ref("ORD_MST"), ["ORD_NO", "STATUS_CODE"], 100)
        assert (len(sample.rows), sample.complete, sample.method) == (100, False, "limit")
    finally:
        generic.close()


def test_sqlite_unique_constraints_inline_table_level_and_by_index(tmp_path: Path) -> None:
    """SQLite's unique constraints are read only where an automatic index says there is one; each kind is found."""
    path = tmp_path / "keys.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE inline (id INTEGER PRIMARY KEY, code TEXT UNIQUE, name TEXT)")
        con.execute("CREATE TABLE pair (a TEXT, b TEXT, c TEXT, PRIMARY KEY (a), UNIQUE (b, c))")
        con.execute("CREATE TABLE text_key (k TEXT PRIMARY KEY, v TEXT)")
        con.execute("CREATE TABLE plain (id INTEGER PRIMARY KEY, email TEXT, note TEXT)")
        con.execute("CREATE UNIQUE INDEX plain_email ON plain (email)")
        con.execute("CREATE UNIQUE INDEX plain_note ON plain (note) WHERE note IS NOT NULL")
    generic = GenericConnector(URL.create("sqlite", database=str(path)))
    try:
        assert generic.describe(ref("inline")).unique == (("code",),)
        assert generic.describe(ref("pair")).unique == (("b", "c"),)
        assert generic.describe(ref("text_key")).unique == ()  # its automatic index is the primary key's
        assert generic.describe(ref("plain")).unique == (("email",),)  # a partial index makes nothing unique
    finally:
        generic.close()


def test_sqlite_row_estimates_from_the_rowid_span_or_analyze(tmp_path: Path) -> None:
    """A table's rows are estimated from its rowid's two ends (none for a WITHOUT ROWID table, where the rowid is
    out of reach), and from ANALYZE's counts once there are any."""
    path, other = tmp_path / "rows.sqlite", tmp_path / "other.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE appended (id INTEGER PRIMARY KEY, v TEXT)")
        con.executemany("INSERT INTO appended (v) VALUES (?)", [(str(i),) for i in range(40)])
        con.execute("CREATE TABLE keyed (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID")
        con.executemany("INSERT INTO keyed VALUES (?, ?)", [(f"k{i}", "v") for i in range(7)])
        con.execute("CREATE TABLE shadowed (rowid TEXT, oid TEXT, _rowid_ TEXT)")
        con.executemany("INSERT INTO shadowed VALUES ('a', 'b', 'c')", [() for _ in range(3)])
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE counted (id INTEGER PRIMARY KEY, v TEXT)")
        con.execute("CREATE INDEX counted_v ON counted (v)")
        con.executemany("INSERT INTO counted (v) VALUES (?)", [(str(i % 3),) for i in range(25)])
        con.execute("DELETE FROM counted WHERE id <= 5")
        con.execute("ANALYZE")
    sqlite = open_connector(URL.create("sqlite", database=str(path)))
    try:
        assert sqlite.describe(ref("appended")).row_estimate == 40
        assert sqlite.describe(ref("keyed")).row_estimate is None
        assert sqlite.describe(ref("shadowed")).row_estimate is None  # every rowid alias is a column's name
    finally:
        sqlite.close()
    analysed = open_connector(URL.create("sqlite", database=str(other)))
    try:
        assert analysed.describe(ref("counted")).row_estimate == 20  # ANALYZE's count, not the span 6..25
    finally:
        analysed.close()


def test_a_missing_sqlite_file_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        open_connector(URL.create("sqlite", database=str(tmp_path / "missing.sqlite")))


@pytest.mark.parametrize(
    "server",
    [
        pytest.param(MARIADB_SERVER, id="mariadb", marks=pytest.mark.mariadb),
        pytest.param(POSTGRES_SERVER, id="postgres", marks=pytest.mark.postgres),
    ],
)
def test_connection_errors_are_source_errors_without_the_password(server: str) -> None:
    url = make_url(server).set(username="ts_nobody", password="s3cret-Pw", database="ts_no_such_db")
    with pytest.raises(SourceError) as caught:
        open_connector(url)
    assert "s3cret-Pw" not in str(caught.value)
    assert not isinstance(caught.value, SourceTimeout)
