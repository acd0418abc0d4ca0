"""The SQLite connector reads each schema's CREATE statements once and describes tables exactly as SQLAlchemy's own
reflection does: keys (named, inline, onto an implicit primary key), unique sets, views, WITHOUT ROWID tables,
generated columns, quoted names, and a table made after the first read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import URL, create_engine, event, inspect

from catalog.connectors.base import TableInfo, TableRef
from catalog.connectors.introspection import read_table
from catalog.connectors.sqlite import SqliteConnector

SCHEMA = [
    "CREATE TABLE cust (cust_id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL, email TEXT UNIQUE)",
    "CREATE TABLE region (code CHAR(2), country CHAR(2), label NVARCHAR(30), PRIMARY KEY (country, code))",
    'CREATE TABLE "Order Lines" (line_no INTEGER, ord_no INTEGER REFERENCES ord(ord_no), '
    "qty NUMERIC(10, 2), amount REAL, PRIMARY KEY (ord_no, line_no))",
    "CREATE TABLE ord (ord_no INTEGER PRIMARY KEY, cust_id INTEGER REFERENCES cust, country CHAR(2), "
    "region CHAR(2), placed DATETIME, total DECIMAL(12,2), "
    "doubled DECIMAL(12,2) GENERATED ALWAYS AS (total * 2) VIRTUAL, "
    "CONSTRAINT fk_region FOREIGN KEY (country, region) REFERENCES region (country, code) ON DELETE CASCADE)",
    "CREATE UNIQUE INDEX ux_ord_placed ON ord (placed, cust_id)",
    "CREATE UNIQUE INDEX ux_partial ON ord (region) WHERE region IS NOT NULL",
    "CREATE INDEX ix_plain ON ord (country)",
    "CREATE TABLE kv (k TEXT PRIMARY KEY, v BLOB, UNIQUE (v)) WITHOUT ROWID",
    "CREATE TABLE untyped (a, b)",
    "CREATE VIEW big_orders AS SELECT ord_no, total FROM ord WHERE total > 100",
]


def _database(path: Path) -> Path:
    with sqlite3.connect(path) as con:
        for statement in SCHEMA:
            con.execute(statement)
        con.execute("INSERT INTO cust (cust_id, name) VALUES (3, 'a'), (9, 'b')")
    return path


def _reflected(path: Path, ref: TableRef) -> TableInfo:
    """What SQLAlchemy's own reflection gives, on an engine of its own."""
    engine = create_engine(URL.create("sqlite", database=str(path)))
    try:
        with engine.connect() as conn:
            return read_table(inspect(conn), ref, engine.dialect)
    finally:
        engine.dispose()


def test_described_as_sqlalchemy_reflects_every_table(tmp_path: Path) -> None:
    path = _database(tmp_path / "shop.sqlite")
    connector = SqliteConnector(URL.create("sqlite", database=str(path)))
    try:
        refs = connector.list_tables()
        assert {r.name for r in refs} == {"cust", "region", "Order Lines", "ord", "kv", "untyped", "big_orders"}
        for ref in refs:
            described = connector.describe(ref)
            expected = _reflected(path, ref)
            assert (described.columns, described.primary_key, described.foreign_keys, described.unique) == (
                expected.columns,
                expected.primary_key,
                expected.foreign_keys,
                expected.unique,
            ), ref.name
        ord_info = connector.describe(TableRef(None, "ord", "table"))
        assert sorted((fk.columns, fk.ref_table, fk.ref_columns) for fk in ord_info.foreign_keys) == [
            (("country", "region"), "region", ("country", "code")),
            (("cust_id",), "cust", ("cust_id",)),  # onto the implicit primary key
        ]
        assert ord_info.unique == (("placed", "cust_id"),)  # the partial index makes nothing unique
        assert connector.describe(TableRef(None, "cust", "table")).row_estimate == 7  # rowids 3..9
    finally:
        connector.close()


def test_the_schema_is_read_once_and_later_tables_still_found(tmp_path: Path) -> None:
    path = _database(tmp_path / "shop.sqlite")
    connector = SqliteConnector(URL.create("sqlite", database=str(path)))
    scans: list[str] = []

    @event.listens_for(connector.sa_engine, "before_cursor_execute")
    def count(conn: object, cursor: object, statement: str, *args: object) -> None:
        if "sqlite_master" in statement:
            scans.append(statement)

    try:
        for ref in connector.list_tables():
            connector.describe(ref)
        create_reads = [s for s in scans if "'table', 'view'" in s]
        assert len(create_reads) == 1, create_reads  # every table's CREATE statement in one read
        with sqlite3.connect(path) as con:  # made after that read: the dialect's own lookup finds it
            con.execute("CREATE TABLE late (id INTEGER PRIMARY KEY, cust_id INTEGER REFERENCES cust (cust_id))")
        late = connector.describe(TableRef(None, "late", "table"))
        assert late.primary_key == ("id",)
        assert [(fk.columns, fk.ref_table) for fk in late.foreign_keys] == [(("cust_id",), "cust")]
    finally:
        connector.close()
