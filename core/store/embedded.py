"""The embedded metadata store: PostgreSQL 16 with pgvector from the `pgserver` package, in TABLESCOUT_HOME.

The data directory is reused by every command of one installation; the server stops when the last process
using it closes its handle (pgserver counts handles across processes).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import URL, create_engine, text
from sqlalchemy.engine import make_url

from core.errors import StoreError

DATABASE_NAME = "tablescout"

log = logging.getLogger(__name__)


@dataclass
class EmbeddedServer:
    handle: Any
    url: URL

    def stop(self) -> None:
        self.handle.cleanup()


def start_embedded(pgdata: Path) -> EmbeddedServer:
    from pgserver import postgres_server

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle = postgres_server.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:
        raise StoreError(f"cannot start the embedded metadata store in {pgdata}: {exc}") from exc
    server_url = make_url(handle.get_uri()).set(drivername="postgresql+psycopg")
    _ensure_database(server_url)
    return EmbeddedServer(handle=handle, url=server_url.set(database=DATABASE_NAME))


def _ensure_database(server_url: URL) -> None:
    engine = create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            exists = conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": DATABASE_NAME}).first()
            if exists is None:
                log.info("creating database %s in the embedded store", DATABASE_NAME)
                conn.execute(text(f'CREATE DATABASE "{DATABASE_NAME}"'))
    finally:
        engine.dispose()
