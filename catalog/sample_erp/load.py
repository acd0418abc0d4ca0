"""Writing the sample databases: SQLite files (:func:`build_sqlite`) and server databases (:func:`load_into`)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from sqlalchemy import URL, Connection, MetaData, create_engine

from .common import TableRows
from .rows import generate
from .schema import DATABASES, metadata_for

#: Rows per INSERT round trip: large enough to be fast, small enough for MariaDB's max_allowed_packet.
BATCH_SIZE = 2_000


def insert_rows(conn: Connection, metadata: MetaData, tables: TableRows) -> None:
    """Insert ``tables`` parents first, in executemany batches, on an open connection (the caller commits)."""
    for table in metadata.sorted_tables:
        rows = tables[table.name]
        statement = table.insert()
        for start in range(0, len(rows), BATCH_SIZE):
            conn.execute(statement, rows[start : start + BATCH_SIZE])


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
