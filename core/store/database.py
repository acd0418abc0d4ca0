"""Opening the metadata store: the server named by TABLESCOUT_DATABASE_URL, or the embedded one.

The command or task boundary owns the transaction: it calls `Store.transaction()` and hands the session to
services and repositories, which never commit. When the store goes away under a long-lived process (a worker, a
console waiting for a turn), `connection_lost` recognises the error and `Store.revive` brings the store back: the
embedded server is started again, a server named by URL is reconnected to once it answers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import URL, Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, SQLAlchemyError

from core.config.settings import Settings
from core.errors import StoreError, StoreUnavailable
from core.store.embedded import EmbeddedServer, start_embedded

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

CONNECT_TIMEOUT_S = 5
#: Connections kept open: a worker runs up to this many turns at once without reconnecting (the pool grows lazily,
#: so a command-line process keeps the one or two it uses).
POOL_SIZE = 20
POOL_OVERFLOW = 20
#: SQLSTATE classes of a connection that broke or could not be made: connection exceptions (08) and the server
#: shutting down or starting (57P01-57P05); a deadlock or a cancelled statement (also OperationalError) is neither.
LOST_SQLSTATES = ("08", "57P")

log = logging.getLogger(__name__)


def connection_lost(exc: BaseException) -> bool:
    """Whether `exc` is a database connection that broke mid-statement or could not be made (the server went away,
    is restarting or was killed), as opposed to an error of the statement itself."""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    if not isinstance(exc, OperationalError):
        return False
    sqlstate = getattr(exc.orig, "sqlstate", None)
    return sqlstate is None or str(sqlstate).startswith(LOST_SQLSTATES)


@dataclass
class Store:
    engine: Engine
    #: made on the first transaction: a command that only reads the schema revision does not load the ORM
    sessions: sessionmaker[Session] | None = None
    embedded: EmbeddedServer | None = field(default=None)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work: committed when the block ends, rolled back if it raises."""
        if self.sessions is None:
            from sqlalchemy.orm import sessionmaker

            self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        with self.sessions.begin() as session:
            yield session

    def revive(self) -> None:
        """Bring the store back after its server went away: start the embedded server again when it stopped (or
        attach to the one another process started), drop the pool's broken connections, and check it answers.
        Raises StoreError while it does not."""
        if self.embedded is not None and self.embedded.restart():
            url = self.embedded.url
            if url != self.engine.url:  # the server's socket moved: a new engine (new sessions follow it)
                self.engine.dispose()
                self.engine, self.sessions = _engine(url), None
            else:
                self.engine.dispose()
        where = self.engine.url.render_as_string(hide_password=True)
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except SQLAlchemyError as exc:
            raise StoreUnavailable(f"the metadata store at {where} does not answer: {error_line(exc)}") from exc
        log.info("the metadata store at %s answers again", where)

    def close(self) -> None:
        self.engine.dispose()
        if self.embedded is not None:
            self.embedded.stop()
            self.embedded = None


def _normalise(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"TABLESCOUT_DATABASE_URL is not a database URL: {exc}") from exc
    if parsed.get_backend_name() != "postgresql":
        raise StoreError(
            f"TABLESCOUT_DATABASE_URL must point at PostgreSQL with pgvector, not {parsed.get_backend_name()}"
        )
    if parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def error_line(exc: SQLAlchemyError) -> str:
    """The driver's first line for `exc` (no SQL, no parameters): what a log line or an operator's message shows."""
    orig = getattr(exc, "orig", None)
    lines = str(orig if orig is not None else exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _engine(url: URL) -> Engine:
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=POOL_SIZE,
        max_overflow=POOL_OVERFLOW,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
    )


def _check_server(engine: Engine, where: str) -> None:
    try:
        with engine.connect() as conn:
            available = conn.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first()
    except OperationalError as exc:
        reason = error_line(exc)
        raise StoreUnavailable(f"cannot reach the metadata store at {where}: {reason}") from exc
    if available is None:
        raise StoreError(
            f"the metadata store at {where} has no pgvector ('vector' extension is not available); "
            "install pgvector on that server, or unset TABLESCOUT_DATABASE_URL to use the embedded store"
        )


def open_store(settings: Settings) -> Store:
    """Connect (starting the embedded server if no URL is set) and check the server can hold tablescout."""
    embedded: EmbeddedServer | None = None
    if settings.database_url is not None:
        url = _normalise(settings.database_url.get_secret_value())
    else:
        embedded = start_embedded(settings.embedded_pgdata)
        url = embedded.url
    engine = _engine(url)
    try:
        _check_server(engine, url.render_as_string(hide_password=True))
    except StoreError:
        engine.dispose()
        if embedded is not None:
            embedded.stop()
        raise
    return Store(engine=engine, embedded=embedded)
