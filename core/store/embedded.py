"""The embedded metadata store: PostgreSQL 16 with pgvector from the `pgserver` package, in TABLESCOUT_HOME.

The data directory is reused by every command of one installation; the server stops when the last process
using it closes its handle (pgserver counts handles across processes).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Connection, create_engine, text
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
    fresh = not (pgdata / "PG_VERSION").exists()
    try:
        handle = postgres_server.get_server(pgdata, cleanup_mode="stop")
        server_url = make_url(handle.get_uri()).set(drivername="postgresql+psycopg")
        if _prepare(server_url, shared_buffers_mb(memory_bytes())) and fresh:
            # A new data directory: start it again now, so the first command already runs with the buffers (a
            # server another process attached to meanwhile keeps running and takes them at its next start).
            handle.cleanup()
            handle = postgres_server.get_server(pgdata, cleanup_mode="stop")
            server_url = make_url(handle.get_uri()).set(drivername="postgresql+psycopg")
    except Exception as exc:
        raise StoreError(f"cannot start the embedded metadata store in {pgdata}: {exc}") from exc
    return EmbeddedServer(handle=handle, url=server_url.set(database=DATABASE_NAME))


#: PostgreSQL's own default, and the most the embedded store takes: the search index of 100,000 tables (an HNSW
#: graph of about 700 MB) fits, and a search that reads its graph from shared buffers instead of the OS page cache
#: takes 2 ms instead of 35-60 ms (bench/results/search_latency_100k*.md).
SHARED_BUFFERS_MIN_MB = 128
SHARED_BUFFERS_MAX_MB = 1024


def memory_bytes() -> int:
    """The memory this machine (or the container's memory limit, where lower) gives processes."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def shared_buffers_mb(memory: int) -> int:
    """A quarter of the memory (PostgreSQL's usual advice), within 128 MB and 1 GB. Buffers take memory only as
    the store's pages fill them, so a small catalog costs what it did with the default."""
    return max(SHARED_BUFFERS_MIN_MB, min(SHARED_BUFFERS_MAX_MB, memory // 4 // 2**20))


def _prepare(server_url: URL, buffers_mb: int) -> bool:
    """Make tablescout's database if missing and set shared_buffers for the server's next start; True when that
    changed the setting."""
    engine = create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            exists = conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": DATABASE_NAME}).first()
            if exists is None:
                log.info("creating database %s in the embedded store", DATABASE_NAME)
                conn.execute(text(f'CREATE DATABASE "{DATABASE_NAME}"'))
            return _size_buffers(conn, buffers_mb)
    finally:
        engine.dispose()


def _size_buffers(conn: Connection, wanted_mb: int) -> bool:
    # pg_file_settings reads the configuration files now: a value written before but not yet started with counts.
    written = conn.scalar(
        text(
            "SELECT setting FROM pg_file_settings WHERE name = 'shared_buffers' AND error IS NULL "
            "ORDER BY seqno DESC LIMIT 1"
        )
    )
    if written == f"{wanted_mb}MB":
        return False
    conn.execute(text(f"ALTER SYSTEM SET shared_buffers = '{int(wanted_mb)}MB'"))
    log.info("embedded store: shared_buffers %s MB from its next start", wanted_mb)
    return True
