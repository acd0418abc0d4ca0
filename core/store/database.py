"""Opening the metadata store: the server named by TABLESCOUT_DATABASE_URL, or the embedded one.

The command or task boundary owns the transaction: it calls `Store.transaction()` and hands the session to
services and repositories, which never commit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import URL, Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from core.errors import StoreError
from core.settings import Settings
from core.store.embedded import EmbeddedServer, start_embedded

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

CONNECT_TIMEOUT_S = 5
#: Connections kept open: a worker runs up to this many turns at once without reconnecting (the pool grows lazily,
#: so a command-line process keeps the one or two it uses).
POOL_SIZE = 20
POOL_OVERFLOW = 20


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


def _check_server(engine: Engine, where: str) -> None:
    try:
        with engine.connect() as conn:
            available = conn.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first()
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
        raise StoreError(f"cannot reach the metadata store at {where}: {reason}") from exc
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
    engine = create_engine(
        url,
        pool_pre_ping=True,
        pool_size=POOL_SIZE,
        max_overflow=POOL_OVERFLOW,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
    )
    try:
        _check_server(engine, url.render_as_string(hide_password=True))
    except StoreError:
        engine.dispose()
        if embedded is not None:
            embedded.stop()
        raise
    return Store(engine=engine, embedded=embedded)
