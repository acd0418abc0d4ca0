"""The chunk vector index (HNSW), set aside while a large load writes its chunks and built once after it; and the
locks indexing and refinement jobs hold.

Keeping an HNSW graph up to date costs a graph search per inserted chunk, and that cost grows with the graph:
9-14 ms per chunk at 333,000 chunks on an idle 2-core machine (pgvector 0.6.2), against 0.7 ms per chunk to build
the graph once over the chunks stored (bench/results/search_latency_100k*.md). A large load therefore drops the
index, writes its chunks, and builds the index again, all without blocking anyone: `DROP INDEX CONCURRENTLY` and
`CREATE INDEX CONCURRENTLY` run on a connection of their own, outside any transaction, and searches meanwhile find
nearest chunks by an exact scan (complete, only slower).

Whoever suspends the index holds a session advisory lock until it is built again; a job that finds the index
missing or left invalid (a build cancelled or killed half way) builds it when nobody holds that lock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from core.errors import StoreError

log = logging.getLogger(__name__)

NAME = "ix_search_chunks_embedding"
#: The index as the model and migration 0012 define it (core/store/models/catalog.py), built without blocking
#: writers. tests/search/test_index_upkeep.py checks that a rebuilt index has the definition of a migrated store.
CREATE = (
    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {NAME} ON search_chunks "
    "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
)
#: Memory for building the graph in one go (about 1.7 KB per chunk: 350,000 chunks fit in 600 MB); as migration 0012.
BUILD_MEMORY = "1GB"
#: pg_advisory_lock(classid, objid) keys: this one is held by whoever has the vector index set aside or is building it.
LOCK_CLASS = 0x7473  # "ts"
LOCK_VECTOR_INDEX = 1
#: pg_advisory_lock(classid, source id): held while a source's index is worked out and written.
LOCK_CLASS_SOURCE = 0x7474
#: pg_try_advisory_lock(classid, source id): held while a source's chunks are refined (search.refinement).
LOCK_CLASS_REFINING = 0x7475


def state(conn: Connection) -> str:
    """The index's state: "valid", "invalid" (a concurrent build that did not finish) or "missing"."""
    valid = conn.scalar(text("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(:name)"), {"name": NAME})
    if valid is None:
        return "missing"
    return "valid" if valid else "invalid"


def _autocommit(engine: Engine) -> Connection:
    return engine.connect().execution_options(isolation_level="AUTOCOMMIT")


def _try_lock(conn: Connection) -> bool:
    return bool(conn.scalar(text("SELECT pg_try_advisory_lock(:c, :o)"), {"c": LOCK_CLASS, "o": LOCK_VECTOR_INDEX}))


def _unlock(conn: Connection) -> None:
    conn.execute(text("SELECT pg_advisory_unlock(:c, :o)"), {"c": LOCK_CLASS, "o": LOCK_VECTOR_INDEX})


def _build(conn: Connection) -> float:
    """Build the index (dropping an invalid leftover first); seconds taken."""
    if state(conn) == "invalid":
        conn.execute(text(f"DROP INDEX CONCURRENTLY IF EXISTS {NAME}"))
    started = time.perf_counter()
    conn.execute(text(f"SET maintenance_work_mem = '{BUILD_MEMORY}'"))
    try:
        conn.execute(text(CREATE))
    except DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else type(exc).__name__
        raise StoreError(
            f"building the search vector index failed ({reason}); the chunks are saved and searches scan them "
            "exactly until the next `tablescout analyze` builds it"
        ) from exc
    finally:
        conn.execute(text("RESET maintenance_work_mem"))
    return time.perf_counter() - started


@dataclass
class Suspension:
    """The index set aside by this job: `resume` builds it again and lets others manage it."""

    conn: Connection

    def resume(self) -> float:
        try:
            seconds = _build(self.conn)
            log.info("built the chunk vector index again in %.1f s", seconds)
            return seconds
        finally:
            try:
                _unlock(self.conn)
            finally:
                self.conn.close()


def suspend(engine: Engine) -> Suspension | None:
    """Drop the index until `resume`, or None when another job has it set aside or is building it (its build then
    takes in whatever this job writes)."""
    conn = _autocommit(engine)
    try:
        if not _try_lock(conn):
            conn.close()
            return None
        conn.execute(text(f"DROP INDEX CONCURRENTLY IF EXISTS {NAME}"))
    except BaseException:
        conn.close()  # the session lock goes with the connection
        raise
    log.info("set the chunk vector index aside for a large load")
    return Suspension(conn)


def ensure(engine: Engine) -> float | None:
    """Build the index if it is missing or invalid and nobody is managing it; seconds taken, None if not built."""
    with engine.connect() as conn:
        if state(conn) == "valid":
            return None
    conn = _autocommit(engine)
    try:
        if not _try_lock(conn):
            return None
        try:
            if state(conn) == "valid":
                return None
            seconds = _build(conn)
            log.warning("the chunk vector index was missing or invalid; built it in %.1f s", seconds)
            return seconds
        finally:
            _unlock(conn)
    finally:
        conn.close()


@contextmanager
def source_indexing(engine: Engine, source_id: int) -> Iterator[None]:
    """Hold the source's indexing lock: its chunks are read in one transaction and written in another, and
    another job indexing the same source in between would make that plan stale."""
    with _autocommit(engine) as conn:
        conn.execute(text("SELECT pg_advisory_lock(:c, :o)"), {"c": LOCK_CLASS_SOURCE, "o": source_id})
        try:
            yield
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:c, :o)"), {"c": LOCK_CLASS_SOURCE, "o": source_id})


@contextmanager
def source_refining(engine: Engine, source_id: int) -> Iterator[bool]:
    """Take the source's refinement lock if nobody holds it: yields whether this job holds it (and so refines)."""
    with _autocommit(engine) as conn:
        held = bool(
            conn.scalar(text("SELECT pg_try_advisory_lock(:c, :o)"), {"c": LOCK_CLASS_REFINING, "o": source_id})
        )
        try:
            yield held
        finally:
            if held:
                conn.execute(text("SELECT pg_advisory_unlock(:c, :o)"), {"c": LOCK_CLASS_REFINING, "o": source_id})
