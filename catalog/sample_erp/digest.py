"""Comparing sample databases across engines: :func:`row_counts` and :func:`content_digest`."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterator
from decimal import Decimal

from sqlalchemy import CHAR, URL, Column, Engine, Numeric, create_engine, func, select

from .schema import metadata_for

Normaliser = Callable[[object], "str | None"]


@contextlib.contextmanager
def _engine(url_or_engine: str | URL | Engine) -> Iterator[Engine]:
    if isinstance(url_or_engine, Engine):
        yield url_or_engine
        return
    engine = create_engine(url_or_engine)
    try:
        yield engine
    finally:
        engine.dispose()


def row_counts(url_or_engine: str | URL | Engine, name: str) -> dict[str, int]:
    """Number of rows in each table of sample database ``name`` at the given location, keyed by table name."""
    metadata = metadata_for(name)
    with _engine(url_or_engine) as engine, engine.connect() as conn:
        return {
            table.name: int(conn.execute(select(func.count()).select_from(table)).scalar_one())
            for table in sorted(metadata.tables.values(), key=lambda t: t.name)
        }


def _normaliser(column: Column[object]) -> Normaliser:
    """How one column's values are written into the digest, identically for every engine's driver."""
    if isinstance(column.type, Numeric) and column.type.scale is not None:
        exponent = Decimal(1).scaleb(-column.type.scale)

        def numeric(value: object) -> str | None:
            if value is None:
                return None
            return str(Decimal(str(value)).quantize(exponent))

        return numeric
    if isinstance(column.type, CHAR):
        # MariaDB strips CHAR padding on read, PostgreSQL keeps it.
        return lambda value: None if value is None else str(value).rstrip(" ")

    def plain(value: object) -> str | None:
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            return value.isoformat(sep=" ")
        if isinstance(value, dt.date):
            return value.isoformat()
        return str(value)

    return plain


def content_digest(url_or_engine: str | URL | Engine, name: str) -> str:
    """SHA-256 (hex) over the names, columns and rows of every table of sample database ``name``.

    Values are normalised (Numeric to its declared scale, dates and datetimes to ISO text, CHAR padding dropped) and
    each table's rows are hashed in sorted order of their normalised form, with key columns first, so that the same
    data gives the same digest on SQLite, MariaDB and PostgreSQL whatever the engines' collations and drivers do.
    """
    metadata = metadata_for(name)
    digest = hashlib.sha256()
    with _engine(url_or_engine) as engine, engine.connect() as conn:
        for table in sorted(metadata.tables.values(), key=lambda t: t.name):
            key_names = {col.name for col in table.primary_key.columns}
            columns = [c for c in table.columns if c.name in key_names] + [
                c for c in table.columns if c.name not in key_names
            ]
            normalisers = [_normaliser(c) for c in columns]
            encoded = sorted(
                json.dumps([norm(value) for norm, value in zip(normalisers, row, strict=True)], ensure_ascii=False)
                for row in conn.execute(select(*columns))
            )
            digest.update(json.dumps([table.name, [c.name for c in columns], len(encoded)]).encode())
            digest.update(b"\n")
            for line in encoded:
                digest.update(line.encode())
                digest.update(b"\n")
    return digest.hexdigest()
