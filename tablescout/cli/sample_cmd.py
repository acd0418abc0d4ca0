"""`tablescout sample build|load`: the sample ERP and billing databases used by the demo, tests and benchmarks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from core.errors import SourceError
from tablescout.cli.context import console, current_store, settings
from tablescout.cli.init_cmd import init

if TYPE_CHECKING:
    from core.config.settings import Settings

# The sample generator, the catalog and the store are imported inside the commands, so that building the command
# line does not load them (and SQLAlchemy with them). The names are written here for the help text;
# tests/cli/test_startup_imports.py checks that they are catalog.sample_erp.DATABASES.
SAMPLE_DATABASES = ("erp", "billing")

app = typer.Typer(help="Generate the sample ERP and billing databases.", no_args_is_help=True)


@app.command("build")
def build(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Where to write erp.sqlite and billing.sqlite.")
    ] = None,
    register: Annotated[bool, typer.Option("--register", help="Add them as sources erp and billing.")] = False,
) -> None:
    """Write the sample databases as SQLite files (identical on every run)."""
    from catalog import sample_erp
    from catalog.registration import add_source
    from core.store.repositories import sources as source_repo

    config = settings()
    target = (directory or config.home / "sample").expanduser().resolve()
    if register:
        _prepare_store(config)  # before any file is written: a store that cannot take them stops here
    with console.status("Generating the sample databases…"):
        paths = sample_erp.build_sqlite(target)
    for name, path in paths.items():
        console.print(f"Wrote {name}: {path}")
    if not register:
        return
    with current_store(config) as store:
        for name, path in paths.items():
            with store.transaction() as session:
                existing = source_repo.by_name(session, name)
            if existing is not None:
                console.print(f"Source {name} is already registered ({existing.url_ref}); left as it is")
                continue
            info = add_source(config, store, name, f"sqlite:///{path}", [])
            console.print(f"Registered source [bold]{name}[/] ({info.engine} {info.version})")


def _prepare_store(config: Settings) -> None:
    """Initialise a store that was never initialised (a fresh home); refuse one that needs migrating."""
    from core.store import migrate
    from core.store.database import open_store

    store = open_store(config)
    try:
        fresh = migrate.current_revision(store.engine) is None
        if not fresh:
            migrate.require_current(store.engine)
    finally:
        store.close()
    if fresh:
        console.print("The metadata store is not initialised yet; initialising it first (`tablescout init`).")
        init()


@app.command("load")
def load(
    name: Annotated[str, typer.Argument(help=f"Which sample database: {', '.join(SAMPLE_DATABASES)}.")],
    url: Annotated[str, typer.Argument(help="An existing MariaDB/MySQL or PostgreSQL database; secrets as ${VAR}.")],
) -> None:
    """Load a sample database into a server database (its sample tables are replaced)."""
    from sqlalchemy.exc import SQLAlchemyError

    from catalog import sample_erp, source_url

    if name not in sample_erp.DATABASES:
        raise SourceError(f"unknown sample database {name!r}; choose one of {', '.join(sample_erp.DATABASES)}")
    config = settings()
    parsed = source_url.parse(url)
    shown = source_url.display(parsed)
    if parsed.get_backend_name() == "sqlite":
        raise SourceError("use `tablescout sample build` for SQLite files")
    try:
        with console.status(f"Loading {name} into {shown}…"):
            sample_erp.load_into(source_url.expand(parsed, config.environment_value), name)
    except SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None)
        reason = str(orig if orig is not None else exc).strip().splitlines()[0]
        raise SourceError(f"cannot load {name} into {shown}: {reason}") from exc
    console.print(f"Loaded {name} into {shown}")
