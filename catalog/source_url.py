"""Source URLs: parsing, driver defaults, `${ENV_VAR}` placeholders for secrets, and masking for display.

A URL typed on the command line may not carry a password in clear text: the password goes into an environment
variable and the URL names it (`mysql://reader:${ERP_DB_PASSWORD}@db.internal/erp`). The placeholder form is what
the configuration file and the metadata store keep; the secret is substituted only when connecting.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import URL
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from core.errors import SourceError

PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_DRIVERS = {
    "mysql": "mysql+pymysql",
    "mariadb": "mariadb+pymysql",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
}
SUPPORTED = ("sqlite", "mysql+pymysql", "mariadb+pymysql", "postgresql+psycopg")
QUOTED_PLACEHOLDER = re.compile(r"%24%7B([A-Za-z_][A-Za-z0-9_]*)%7D")
MASK = "***"
SECRET_QUERY_KEYS = ("password", "passwd", "pwd", "secret", "token")


def parse(url: str) -> URL:
    """Parse and give the URL the driver tablescout ships with when it names none."""
    try:
        parsed = make_url(url.strip())
        parsed.port  # noqa: B018 - a port that is not a number fails here, not at connect time
    except ValueError as exc:
        raise SourceError(
            "the database URL's host or port cannot be read (a port must be a number, an IPv6 host goes in [])"
        ) from exc
    except ArgumentError as exc:
        raise SourceError(
            f"{url!r} is not a database URL; expected e.g. sqlite:///path/erp.sqlite, "
            "mysql://user:${PASSWORD_VAR}@host/db or postgresql://user@host/db"
        ) from exc
    driver = DEFAULT_DRIVERS.get(parsed.drivername, parsed.drivername)
    if driver == "postgres":
        driver = "postgresql+psycopg"
    parsed = parsed.set(drivername=driver)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database in ("", ":memory:") or database.startswith("file::memory:"):
            raise SourceError("an in-memory SQLite database cannot be a source; give the path of a database file")
        parsed = parsed.set(database=str(Path(database).expanduser().resolve()))
    return parsed


def render(url: URL) -> str:
    """The URL as text with every secret in place; `${VAR}` placeholders stay readable rather than %-escaped."""
    return QUOTED_PLACEHOLDER.sub(r"${\1}", url.render_as_string(hide_password=False))


def clear_text_secrets(url: URL) -> list[str]:
    """The parts of the URL that hold a secret written out rather than as a `${VAR}` placeholder."""
    found = []
    if url.password is not None and not PLACEHOLDER.fullmatch(str(url.password)):
        found.append("password")
    for key, value in url.query.items():
        values = (value,) if isinstance(value, str) else value
        if key.lower() in SECRET_QUERY_KEYS and any(not PLACEHOLDER.fullmatch(v) for v in values):
            found.append(f"query parameter {key}")
    return found


def display(url: URL) -> str:
    """The URL as tablescout shows and stores it: placeholders kept, any literal secret masked."""
    masked = url
    if url.password is not None and not PLACEHOLDER.fullmatch(str(url.password)):
        masked = masked.set(password=MASK)
    query = {
        k: (MASK if k.lower() in SECRET_QUERY_KEYS and not PLACEHOLDER.fullmatch(str(v)) else v)
        for k, v in url.query.items()
    }
    return render(masked.set(query=query))


def expand(url: URL, lookup: Callable[[str], str | None]) -> URL:
    """Substitute `${VAR}` placeholders from the environment; a missing variable is an error naming it."""

    def sub(value: str | None) -> str | None:
        if value is None:
            return None

        def one(match: re.Match[str]) -> str:
            found = lookup(match.group(1))
            if found is None:
                name = match.group(1)
                raise SourceError(f"the source URL refers to ${{{name}}}, which is not set in the environment")
            return found

        return PLACEHOLDER.sub(one, value)

    query: dict[str, str | tuple[str, ...]] = {
        k: (sub(v) or "" if isinstance(v, str) else tuple(sub(x) or "" for x in v)) for k, v in url.query.items()
    }
    return url.set(
        username=sub(url.username),
        password=sub(str(url.password) if url.password is not None else None),
        host=sub(url.host),
        database=sub(url.database),
        query=query,
    )
