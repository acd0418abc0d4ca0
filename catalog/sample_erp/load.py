"""Writing the sample databases: SQLite files (:func:`build_sqlite`) and server databases (:func:`load_into`)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from sqlalchemy import URL, Connection, MetaData, Table, create_engine

from .common import Row, TableRows
from .rows import generate
from .schema import DATABASES, metadata_for

#: Rows per INSERT round trip: large enough to be fast, small enough for MariaDB's max_allowed_packet.
BATCH_SIZE = 2_000


def insert_rows(conn: Connection, metadata: MetaData, tables: TableRows) -> None:
    """Insert ``tables`` parents first, on an open connection (the caller commits): COPY on PostgreSQL through
    psycopg, executemany batches elsewhere."""
    copying = conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg"
    for table in metadata.sorted_tables:
        rows = tables[table.name]
        if copying and rows:
            _copy_rows(conn, table, rows)
            continue
        if conn.dialect.name == "sqlite" and rows:
            _insert_tuples(conn, table, rows)
            continue
        statement = table.insert()
        for start in range(0, len(rows), BATCH_SIZE):
            conn.execute(statement, rows[start : start + BATCH_SIZE])


def _copy_rows(conn: Connection, table: Table, rows: list[Row]) -> None:
    """One table's rows by COPY FROM STDIN, in the connection's transaction: the sample ERP loads in about a third
    of the time its batched INSERTs take. The columns are those the rows carry, as an INSERT would name them."""
    quote = conn.dialect.identifier_preparer
    columns = [column.name for column in table.columns if column.name in rows[0]]
    names = ", ".join(quote.quote(name) for name in columns)
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    with cursor, cursor.copy(f"COPY {quote.format_table(table)} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([row[name] for name in columns])


def _insert_tuples(conn: Connection, table: Table, rows: list[Row]) -> None:
    """SQLite: one INSERT run over tuples whose values each column type's own bind processor converted, as
    SQLAlchemy's executemany would, without its per-row parameter dictionaries (the ERP writes in a third of the
    time)."""
    columns = [column for column in table.columns if column.name in rows[0]]
    quote = conn.dialect.identifier_preparer
    names = ", ".join(quote.quote(column.name) for column in columns)
    marks = ", ".join("?" for _ in columns)
    dialect = conn.dialect
    pairs = [(column.name, column.type.dialect_impl(dialect).bind_processor(dialect)) for column in columns]
    values = [tuple(row[key] if bind is None else bind(row[key]) for key, bind in pairs) for row in rows]
    conn.exec_driver_sql(f"INSERT INTO {quote.format_table(table)} ({names}) VALUES ({marks})", values)


def _write_sqlite(path: Path, metadata: MetaData, tables: TableRows) -> None:
    engine = create_engine(URL.create("sqlite", database=str(path)))
    try:
        with engine.connect() as conn:
            # The file is a private temporary until renamed into place, so durability buys nothing here.
            conn.exec_driver_sql("PRAGMA journal_mode = OFF")
            conn.exec_driver_sql("PRAGMA synchronous = OFF")
            metadata.create_all(conn)
            insert_rows(conn, metadata, tables)
            conn.commit()
    finally:
        engine.dispose()


def build_sqlite(directory: Path, *, seed: int = 20240630) -> dict[str, Path]:
    """Write ``erp.sqlite`` and ``billing.sqlite`` into ``directory`` (created if missing) and return name -> path.

    Each file is built under a temporary name in the same directory and renamed over the old one, so a reader never
    sees a half-written database and a failed build leaves the previous files untouched.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    data = generate(seed)
    written: dict[str, Path] = {}
    for name in DATABASES:
        target = directory / f"{name}.sqlite"
        handle, temp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".sqlite.tmp", dir=directory)
        os.close(handle)
        temp_path = Path(temp_name)
        try:
            _write_sqlite(temp_path, metadata_for(name), data[name])
            os.replace(temp_path, target)
        except BaseException:
            with contextlib.suppress(OSError):
                temp_path.unlink()
            raise
        written[name] = target
    return written


def load_into(url: str | URL, name: str, *, seed: int = 20240630) -> None:
    """Create the tables of sample database ``name`` in the existing database at ``url`` and load the same rows
    that :func:`build_sqlite` writes, replacing the sample's own tables if they are already there.

    Other tables in the target database are left alone. Connection and SQL errors propagate unchanged.
    """
    metadata = metadata_for(name)
    engine = create_engine(url)
    try:
        with engine.begin() as conn:  # connect before generating, so that a bad URL fails fast
            tables = generate(seed)[name]
            metadata.drop_all(conn, checkfirst=True)
            metadata.create_all(conn)
            insert_rows(conn, metadata, tables)
    finally:
        engine.dispose()
