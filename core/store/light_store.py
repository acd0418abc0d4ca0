"""A read-only psycopg connection to the metadata store, for commands that only read it (`source list`, `note list`,
`card`) and should start in a fraction of a second.

`light_connection` connects with psycopg alone (no SQLAlchemy, no ORM models, no Alembic) when the store is a
server named by TABLESCOUT_DATABASE_URL and checks, with plain SQL, that its schema is at this version's head
revision. Anything off that path answers None and the caller goes the usual way (core.store.database and
core.store.migrate, as `tablescout.cli.context.store_reads` does), so a URL psycopg cannot take as it is, a server
that does not answer or a store that is not current are reported exactly as every other command reports them; the
embedded store is opened that way too (starting it costs more than the imports). Reads use core.store.light_reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlsplit

import psycopg

from core.store import migrate

if TYPE_CHECKING:
    from core.config.settings import Settings

#: The schemes core.store.database accepts for PostgreSQL (it reads them all as psycopg 3).
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2")
CONNECT_TIMEOUT_S = 5  # as core.store.database


def libpq_uri(url: str) -> str | None:
    """The libpq connection URI of a SQLAlchemy PostgreSQL URL, or None when the two could read it differently
    (another scheme, a second `@`, a repeated query parameter such as several hosts)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in POSTGRES_SCHEMES:
        return None
    parts = urlsplit("postgresql://" + rest)
    keys = [key for key, _ in parse_qsl(parts.query, keep_blank_values=True)]
    if parts.netloc.count("@") > 1 or len(keys) != len(set(keys)) or parts.fragment:
        return None
    return "postgresql://" + rest


def _current(conn: psycopg.Connection) -> bool:
    """Whether the store records exactly this version's head revision (migrate.HEAD_REVISION)."""
    try:
        rows = conn.execute(f"SELECT version_num FROM {migrate.VERSION_TABLE}").fetchall()
    except psycopg.errors.UndefinedTable:
        return False
    finally:
        conn.rollback()
    return len(rows) == 1 and rows[0][0] == migrate.HEAD_REVISION


def light_connection(settings: Settings) -> psycopg.Connection | None:
    """A connection made with psycopg alone to a current store, or None where the usual way must answer."""
    if settings.database_url is None:
        return None
    uri = libpq_uri(settings.database_url.get_secret_value())
    if uri is None:
        return None
    try:
        conn = psycopg.connect(uri, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error:
        return None
    try:
        conn.read_only = True
        if _current(conn):
            return conn
    except psycopg.Error:
        pass
    conn.close()
    return None
