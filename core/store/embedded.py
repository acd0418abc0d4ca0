"""The embedded metadata store: PostgreSQL 16 with pgvector from the `pgserver` package, in TABLESCOUT_HOME.

The data directory is reused by every command of one installation; the server stops when the last process
using it closes its handle (pgserver counts handles across processes; core.store.embedded_handles strikes off those
of processes that died without closing theirs, so the next command to close stops the server they left running).
A process holds one handle per data directory, shared by its stores. When the server dies under a process (killed,
out of memory), `EmbeddedServer.restart` starts it again, or attaches to the one another process started meanwhile.
Stop signals wait while a handle is opened or closed (core.interrupts), so none is left half done.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
from sqlalchemy import URL, Connection, create_engine, text
from sqlalchemy.engine import make_url

from core import interrupts
from core.errors import StoreError, StoreUnavailable
from core.store import embedded_handles

if TYPE_CHECKING:
    from pgserver.postgres_server import PostgresServer
    from pgserver.utils import PostmasterInfo

# pgserver is imported where a server is opened: a store named by TABLESCOUT_DATABASE_URL never loads it.

DATABASE_NAME = "tablescout"
#: How long opening a handle keeps trying while a server that went away is still on its way out (a killed
#: postmaster stays a zombie until it is reaped, its backends end a moment later).
OPEN_WAIT_S = 10.0
RETRY_S = 0.2
CONNECT_TIMEOUT_S = 5

log = logging.getLogger(__name__)

#: pgserver's lock object (and its per-process bookkeeping) is not safe between threads: one at a time.
_lock = threading.Lock()


@dataclass
class _Handle:
    """This process's handle on one data directory, shared by every EmbeddedServer opened on it."""

    server: PostgresServer | None  # None after a restart that failed: the next restart tries again
    url: URL
    users: int = 1


_handles: dict[Path, _Handle] = {}


class EmbeddedServer:
    """One store's hold on the embedded server of a data directory."""

    def __init__(self, pgdata: Path, url: URL) -> None:
        self.pgdata = pgdata
        self._url = url
        self._open = True

    @property
    def url(self) -> URL:
        """The URL of tablescout's database (the same across restarts, unless the socket moved)."""
        shared = _handles.get(self.pgdata)
        return (shared.url if shared is not None else self._url).set(database=DATABASE_NAME)

    def running(self) -> bool:
        """Whether the server this process holds is alive (no database round trip: a look at its process)."""
        shared = _handles.get(self.pgdata)
        return shared is not None and shared.server is not None and _alive(shared.server.get_postmaster_info())

    def restart(self) -> bool:
        """Start the server again when the one this process held is gone; True when it had to."""
        with interrupts.deferred(), _lock:
            shared = _handles.get(self.pgdata)
            if shared is None or not self._open:
                raise StoreError(f"the embedded metadata store in {self.pgdata} was closed by this process")
            if shared.server is not None and _alive(shared.server.get_postmaster_info()):
                return False
            log.warning("the embedded metadata store in %s stopped; starting it again", self.pgdata)
            if shared.server is not None:
                _release(self.pgdata, shared.server)
                shared.server = None
            shared.server, shared.url = _attach(self.pgdata)
            return True

    def stop(self) -> None:
        """Close this hold; the last hold of the process closes its handle (the server stops if no other process
        holds one). Closing twice does nothing."""
        with interrupts.deferred(), _lock:
            if not self._open:
                return
            self._open = False
            shared = _handles[self.pgdata]
            shared.users -= 1
            if shared.users:
                return
            del _handles[self.pgdata]
            if shared.server is not None:
                _release(self.pgdata, shared.server)


def start_embedded(pgdata: Path) -> EmbeddedServer:
    """Hold the embedded server of `pgdata`, starting it (and making the data directory) when needed."""
    pgdata = pgdata.expanduser().resolve()
    with interrupts.deferred(), _lock:
        shared = _handles.get(pgdata)
        if shared is not None:
            shared.users += 1
            return EmbeddedServer(pgdata, shared.url)
        pgdata.mkdir(parents=True, exist_ok=True)
        fresh = not (pgdata / "PG_VERSION").exists()
        server, url = _attach(pgdata)
        try:
            if _prepare(url, shared_buffers_mb(memory_bytes())) and fresh:
                # A new data directory: start it again now, so the first command already runs with the buffers (a
                # server another process attached to meanwhile keeps running and takes them at its next start).
                _release(pgdata, server)
                server, url = _attach(pgdata)
        except Exception as exc:
            _release(pgdata, server)
            raise StoreError(f"cannot start the embedded metadata store in {pgdata}: {exc}") from exc
        _handles[pgdata] = _Handle(server=server, url=url)
        return EmbeddedServer(pgdata, url)


def _alive(info: PostmasterInfo | None) -> bool:
    """Whether the postmaster `info` names runs: a server (not a program that took over its PID after it died),
    the same process (psutil compares start times) and not a zombie."""
    if info is None or info.process is None:
        return False
    try:
        process = info.process
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE and process.name() == "postgres"
    except psutil.Error:
        return False


def _current_postmaster(pgdata: Path) -> PostmasterInfo | None:
    from pgserver.utils import PostmasterInfo

    try:
        return PostmasterInfo.read_from_pgdata(pgdata)
    except (OSError, ValueError, AssertionError):  # postmaster.pid half written by a server starting or stopping
        return None


def _on_its_way_out(pgdata: Path) -> bool:
    """A postmaster that ended but is not reaped yet: pgserver would take it for running and attach to it."""
    info = _current_postmaster(pgdata)
    if info is None or info.process is None:
        return False
    try:
        return info.process.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _clear_stale_pid_file(pgdata: Path) -> None:
    """Remove a postmaster.pid whose PID now names another program (in a restarted container PIDs start over):
    pgserver would take that program for the server and never start one. PostgreSQL replaces such a file itself."""
    info = _current_postmaster(pgdata)
    if info is None or info.process is None:
        return
    try:
        name = info.process.name()
    except psutil.Error:
        return
    if name != "postgres":
        log.warning("embedded store: postmaster.pid names process %s (%s), not a server; removing it", info.pid, name)
        (pgdata / "postmaster.pid").unlink(missing_ok=True)


def _attach(pgdata: Path) -> tuple[PostgresServer, URL]:
    """Open a handle (starting the server if none runs) and check it answers, waiting out a server that is still
    going away."""
    from pgserver.postgres_server import PostgresServer

    give_up = time.monotonic() + OPEN_WAIT_S
    while True:
        server: PostgresServer | None = None
        try:
            if _on_its_way_out(pgdata):
                raise StoreError("the previous server has not ended yet")
            _clear_stale_pid_file(pgdata)
            with PostgresServer._lock:  # the lock pgserver holds while it reads or writes the handle list
                embedded_handles.prune(pgdata)
            server = PostgresServer(pgdata, cleanup_mode="stop")
            with PostgresServer._lock:
                embedded_handles.record_owner(pgdata)
            url = make_url(server.get_uri()).set(drivername="postgresql+psycopg")
            _check_connects(url)
            return server, url
        except Exception as exc:
            if server is not None:
                _release(pgdata, server)
            if time.monotonic() > give_up or interrupts.requested() is not None:
                raise StoreUnavailable(f"cannot start the embedded metadata store in {pgdata}: {exc}") from exc
            log.info("embedded store in %s not ready yet (%s); trying again", pgdata, exc)
            time.sleep(RETRY_S)


def _release(pgdata: Path, server: PostgresServer) -> None:
    """Close `server`'s handle: the server stops when no live process holds one any more."""
    from pgserver.postgres_server import PostgresServer

    if not _alive(server.get_postmaster_info()):
        if not _alive(_current_postmaster(pgdata)):
            # Nothing to stop; pgserver would try to stop the dead server (a zombie until reaped) and fail.
            with PostgresServer._lock:
                embedded_handles.drop(pgdata, os.getpid())
            return
        # Another process started the server again after the one this handle knew died: attach to that one, so
        # that this close stops it when it is the last (pgserver stops only the postmaster a handle knows).
        server = PostgresServer(pgdata, cleanup_mode="stop")
    with PostgresServer._lock:
        embedded_handles.prune(pgdata)
    server.cleanup()


def _check_connects(url: URL) -> None:
    engine = create_engine(url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    finally:
        engine.dispose()


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
