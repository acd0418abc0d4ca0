"""Connecting to a source once, read-only and with a short timeout, to learn its engine, version and what its
account may do beyond reading (catalog.account_check)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Engine, create_engine, text
from sqlalchemy.exc import DBAPIError, NoSuchModuleError, SQLAlchemyError

from catalog.account_capabilities import AccountCheck
from catalog.account_check import check_account
from catalog.source_url import SUPPORTED
from core.errors import SourceError

CONNECT_TIMEOUT_S = 5


@dataclass(frozen=True)
class SourceInfo:
    engine: str
    version: str
    account: AccountCheck


SQLITE_HEADER = b"SQLite format 3\x00"


def _looks_like_sqlite(path: Path) -> bool:
    """An SQLite database file starts with its 16-byte header; an empty file is a new, empty database."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise SourceError(f"cannot read SQLite database file {path}: {exc.strerror or exc}") from exc
    return head in (b"", SQLITE_HEADER)


def _sqlite_engine(url: URL) -> Engine:
    path = Path(url.database or "")
    if not path.is_file():
        raise SourceError(f"SQLite database file {path} does not exist")
    if not _looks_like_sqlite(path):
        raise SourceError(f"{path} is not an SQLite database file")

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=CONNECT_TIMEOUT_S)

    return create_engine("sqlite://", creator=connect)


def connect_args(url: URL) -> dict[str, Any]:
    backend = url.get_backend_name()
    if backend in ("mysql", "mariadb"):
        return {"connect_timeout": CONNECT_TIMEOUT_S, "read_timeout": 30}
    if backend == "postgresql":
        return {"connect_timeout": CONNECT_TIMEOUT_S}
    return {}


def source_engine(url: URL) -> Engine:
    """An engine for a source URL whose placeholders are already expanded."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    try:
        return create_engine(url, connect_args=connect_args(url), pool_pre_ping=True)
    except NoSuchModuleError as exc:
        raise SourceError(
            f"unsupported database URL scheme {url.drivername!r}; tablescout supports {', '.join(SUPPORTED)}"
        ) from exc
    except (ImportError, SQLAlchemyError) as exc:
        raise SourceError(f"cannot use URL scheme {url.drivername!r}: {exc}") from exc


def _engine_name(engine: Engine) -> str:
    dialect = engine.dialect
    if dialect.name == "mysql" and getattr(dialect, "is_mariadb", False):
        return "mariadb"
    return str(dialect.name)


def _version(engine: Engine, conn: Any) -> str:
    name = engine.dialect.name
    if name == "sqlite":
        return str(conn.execute(text("SELECT sqlite_version()")).scalar_one())
    if name == "postgresql":
        return str(conn.execute(text("SHOW server_version")).scalar_one()).split(" ")[0]
    if name in ("mysql", "mariadb"):
        return str(conn.execute(text("SELECT version()")).scalar_one())
    info = engine.dialect.server_version_info
    return ".".join(str(p) for p in info) if info else "unknown"


def probe(url: URL, shown_as: str) -> SourceInfo:
    """Connect once and return engine, version and the account's capabilities; every failure becomes a SourceError
    naming the source. The engine (and any session state the check set) is thrown away before returning."""
    engine = source_engine(url)
    try:
        with engine.connect() as conn:
            version = _version(engine, conn)
            name = _engine_name(engine)
            account = check_account(conn, name, url)
        return SourceInfo(engine=name, version=version, account=account)
    except DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
        raise SourceError(f"cannot connect to {shown_as}: {reason}") from exc
    except SQLAlchemyError as exc:
        raise SourceError(f"cannot connect to {shown_as}: {exc}") from exc
    finally:
        engine.dispose()
