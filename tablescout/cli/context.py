"""What every command needs: validated settings, an open and current metadata store, who it acts as, and error
reporting."""

from __future__ import annotations

import signal
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console

from core import interrupts

if TYPE_CHECKING:
    import psycopg
    from sqlalchemy.orm import Session

    from core.access.permissions import Principal
    from core.access.users import UserRef
    from core.config.settings import Settings
    from core.store.database import Store

console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)

# pgserver asks platformdirs for a runtime directory; on servers without XDG_RUNTIME_DIR it falls back to /tmp
# and warns on every start, which is noise for a command-line user.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


def settings(*, check_file: bool = True) -> Settings:
    """Validated settings; `check_file=False` for commands that need no configuration file (health probes)."""
    # Imported here and below, not at the top: building the command line (`--help`) needs neither.
    from core.config.settings import load_settings

    return load_settings(check_file=check_file)


@contextmanager
def current_store(config: Settings) -> Iterator[Store]:
    """The metadata store, refusing to work on one that `tablescout init` has not brought up to date."""
    from core.store import migrate
    from core.store.database import open_store

    store = open_store(config)
    try:
        migrate.require_current(store.engine)
        yield store
    finally:
        store.close()


@contextmanager
def store_reads(config: Settings) -> Iterator[psycopg.Connection]:
    """A psycopg connection for the read-only commands (core.store.light_reads): made with psycopg alone when
    core.store.light_store can, else through `current_store`, which reports what is wrong as every command does."""
    from core.store.light_store import light_connection

    conn = light_connection(config)
    if conn is not None:
        with conn:
            yield conn
        return
    import psycopg

    with current_store(config) as store:
        raw = store.engine.raw_connection()
        try:
            driver = raw.driver_connection
            assert isinstance(driver, psycopg.Connection)  # core.store.database connects with psycopg 3
            yield driver
        finally:
            raw.close()


def principal_for(session: Session, config: Settings, user: str | None) -> tuple[Principal, UserRef | None]:
    """Who a command acts as: the operator, or the chat user `--user` names (slack:ID or teams:ID) with their roles."""
    from core.access.permissions import Principal, parse_user_ref, resolve_principal
    from core.access.users import UserRef

    if user is None:
        return Principal.for_operator(), None
    from search.service import ensure_known_user  # the search code, only for a chat user

    platform, user_id = parse_user_ref(user)
    principal = resolve_principal(session, config.file, platform, user_id)
    ensure_known_user(principal)
    return principal, UserRef(platform, user_id)


#: The exit status Typer gives a command a KeyboardInterrupt ended, whatever signal raised it.
TYPER_INTERRUPTED = 130


def exit_interrupted(ending: SystemExit) -> None:
    """When a stop signal ended the command (core.interrupts): say so and exit 128 + its number (130 for Ctrl-C,
    143 for SIGTERM), as a shell reports a command a signal ended. Everything on the way out has run by then: the
    unfinished transaction was rolled back, the store closed. A command that took Ctrl-C as its user's way out
    (the chat prompt) ends as it chose."""
    signum = interrupts.requested()
    if signum is None or (signum == signal.SIGINT and ending.code != TYPER_INTERRUPTED):
        return
    name = signal.Signals(signum).name
    errors.print(f"[yellow]stopped by {name}:[/] what was saved before it is kept; the unfinished part was not saved")
    sys.exit(128 + signum)
