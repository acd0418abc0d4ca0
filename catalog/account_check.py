"""What a source's account can do beyond reading, checked when a source is added and at each analysis.

SPEC §7 asks for a read-only account first; the other layers must hold without it, but an operator should know when
the account could write. The check reads only what the account may read about itself: MariaDB/MySQL `SHOW GRANTS`
(and the grants of roles granted to it) with `@@secure_file_priv`; PostgreSQL `pg_roles`, membership of the
predefined roles that write files, run programs or write all data, and the write privileges it holds on the
relations it can read (bounded); for SQLite, whether this OS user could write the file tablescout opens read-only.

Each capability is one stable label (they appear in `source list --json`); `findings` say in words what was seen.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from catalog.account_capabilities import NOT_CHECKED, SUPERUSER, WRITABLE_FILE, AccountCheck, ordered

if TYPE_CHECKING:
    from sqlalchemy import URL, Connection

# SQLAlchemy and the per-engine checks are imported where an account is checked: `source list` (listing_warning)
# needs neither.


def _sqlite(url: URL) -> AccountCheck:
    path = Path(url.database or "")
    if not os.access(path, os.W_OK):
        return AccountCheck(())
    return AccountCheck(
        (WRITABLE_FILE,),
        (
            (
                WRITABLE_FILE,
                f"the file {path} is writable by this OS user (tablescout opens it read-only; take write permission "
                "away or serve a copy to keep it so for every program)",
            ),
        ),
    )


def check_account(conn: Connection, engine: str, url: URL) -> AccountCheck:
    """Check the account of an open connection; `engine` as catalog.probe names it, `url` with secrets expanded.
    An engine without a check, or an account whose privileges cannot be read, comes back unchecked (None)."""
    if engine == "sqlite":
        return _sqlite(url)
    from sqlalchemy.exc import DBAPIError

    from catalog.account_mysql import mysql_capabilities
    from catalog.account_postgres import postgres_capabilities

    try:
        if engine in ("mariadb", "mysql"):
            return ordered(mysql_capabilities(conn, mariadb=engine == "mariadb"))
        if engine == "postgresql":
            return ordered(postgres_capabilities(conn))
    except DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else type(exc).__name__
        return AccountCheck(None, (("", f"its privileges could not be read: {reason}"),))
    return NOT_CHECKED


README_SECTION = "docs/source-accounts.md"


def _read_only_recipe(engine: str, database: str | None) -> str:
    db = database or "erp"
    if engine in ("mariadb", "mysql"):
        return (
            f"CREATE USER 'tablescout'@'%' IDENTIFIED BY '...'; GRANT SELECT, SHOW VIEW ON `{db}`.* TO "
            "'tablescout'@'%';"
        )
    if engine == "postgresql":
        return (
            "CREATE ROLE tablescout LOGIN PASSWORD '...'; GRANT USAGE ON SCHEMA public TO tablescout; "
            "GRANT SELECT ON ALL TABLES IN SCHEMA public TO tablescout;"
        )
    return "an account with SELECT privileges only"


FORCE_HINT = "add --allow-privileged to register this account anyway"


def refusal(name: str, engine: str, url: URL, check: AccountCheck, force_hint: str = FORCE_HINT) -> str:
    """Why a superuser account is refused, and what to do instead (one line)."""
    return (
        f"refused: the account of source {name} is a superuser ({'; '.join(check.findings(SUPERUSER))}), which can "
        "change any data and setting on the server. Register a read-only account instead "
        f"({README_SECTION}), e.g. {_read_only_recipe(engine, url.database)} "
        f"or {force_hint}"
    )


def operator_warning(name: str, check: AccountCheck, *, file_writable: bool = True) -> str | None:
    """One line for the operator when the account can do more than read (or could not be checked); None when it
    is read-only. `file_writable=False` leaves out an SQLite file that is merely writable by this OS user."""
    if check.capabilities is None:
        if not check.evidence:
            return None
        return f"the account of source {name} was not checked for write privileges: {'; '.join(check.findings())}"
    if check.capabilities == (WRITABLE_FILE,):
        return f"source {name}: {check.findings()[0]}" if file_writable else None
    if not check.capabilities:
        return None
    return (
        f"the account of source {name} can do more than read ({', '.join(check.capabilities)}: "
        f"{'; '.join(check.findings())}); use a read-only account ({README_SECTION})"
    )


def listing_warning(name: str, labels: Sequence[str]) -> str | None:
    """The warning `source list` prints for a stored check (labels only)."""
    if not set(labels) - {WRITABLE_FILE}:
        return None
    listed = ", ".join(labels)
    return f"the account of source {name} can do more than read ({listed}); use a read-only account ({README_SECTION})"
