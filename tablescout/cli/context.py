"""What every command needs: validated settings, an open and current metadata store, and error reporting."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from core.settings import Settings
    from core.store.database import Store

console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)

# pgserver asks platformdirs for a runtime directory; on servers without XDG_RUNTIME_DIR it falls back to /tmp
# and warns on every start, which is noise for a command-line user.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


def settings(*, check_file: bool = True) -> Settings:
    """Validated settings; `check_file=False` for commands that need no configuration file (health probes)."""
    # Imported here and below, not at the top: building the command line (`--help`) needs neither.
    from core.settings import load_settings

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
