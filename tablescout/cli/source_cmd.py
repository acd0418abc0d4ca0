"""`tablescout source add|list|remove` and `tablescout source alias add|remove`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from tablescout.cli.context import console, current_store, errors, settings, store_reads

if TYPE_CHECKING:
    from tablescout.cli.source_listing import SourceListing

# The catalog code is imported inside each command, so that building the command line does not load it.

app = typer.Typer(help="Register source databases (use a read-only account).", no_args_is_help=True)
alias_app = typer.Typer(
    help="Other names of a source for @mentions, --db and grants (kept in tablescout.yaml).", no_args_is_help=True
)
app.add_typer(alias_app, name="alias")


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="Short name users write as @name.")],
    url: Annotated[str, typer.Argument(help="SQLAlchemy URL; write passwords as ${ENV_VAR}.")],
    alias: Annotated[list[str] | None, typer.Option("--alias", help="Another name for @mentions.")] = None,
    allow_privileged: Annotated[
        bool, typer.Option("--allow-privileged", help="Register it even when its account is a superuser.")
    ] = False,
) -> None:
    """Register a source database: validates the URL and connects once before saving it.

    The account is checked for what it may do beyond reading: a superuser is refused unless --allow-privileged,
    other write privileges are saved with a warning."""
    from catalog.account_check import operator_warning
    from catalog.registration import add_source

    config = settings()
    with current_store(config) as store:
        info = add_source(config, store, name, url, alias or [], allow_privileged=allow_privileged)
    console.print(f"Added source [bold]{name}[/] ({info.engine} {info.version})")
    warned = operator_warning(name, info.account)
    if warned is not None:
        errors.print(f"[bold yellow]warning:[/] {escape(warned)}", highlight=False)


@app.command("list")
def list_(as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False) -> None:
    """Show registered sources with engine, version and analysis state."""
    from catalog.account_check import listing_warning
    from tablescout.cli.source_listing import list_sources

    config = settings()
    with store_reads(config) as conn:
        listings = list_sources(config, conn)
    if as_json:
        rows = [
            {
                "name": s.name,
                "aliases": list(s.aliases),
                "engine": s.engine,
                "engine_version": s.engine_version,
                "url": s.url,
                "tables": s.tables,
                "analysed_at": s.analysed_at.isoformat() if s.analysed_at else None,
                "registered": s.registered,
                "in_config": s.in_config,
                "privileges": list(s.privileges) if s.privileges is not None else None,
            }
            for s in listings
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not listings:
        console.print("No sources yet. Add one with `tablescout source add NAME URL`.")
        return
    table = Table("name", "aliases", "engine", "url", "tables", "analysed", "state", "account")
    table.columns[3].overflow = "fold"
    for s in listings:
        state = (
            "ok" if s.registered and s.in_config else "not registered (run init)" if s.in_config else "not in config"
        )
        table.add_row(
            s.name,
            ", ".join(s.aliases),
            f"{s.engine or '?'} {(s.engine_version or '').split('-')[0]}".strip(),
            s.url,
            str(s.tables),
            s.analysed_at.strftime("%Y-%m-%d %H:%M") if s.analysed_at else "never",
            state,
            _account(s),
        )
    console.print(table)
    for s in listings:
        warned = listing_warning(s.name, s.privileges or ())
        if warned is not None:
            errors.print(f"[bold yellow]warning:[/] {escape(warned)}", highlight=False)


def _account(listing: SourceListing) -> str:
    """What the account may do beyond reading, as the last check found it."""
    if listing.privileges is None:
        return "not checked" if listing.registered else ""
    if not listing.privileges:
        return "read-only"
    style = "red" if "superuser" in listing.privileges else "yellow"
    return f"[{style}]{escape(', '.join(listing.privileges))}[/]"


@app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="The source to forget.")]) -> None:
    """Forget a source and everything analysed about it (its config entry too)."""
    from catalog.registration import remove_source

    config = settings()
    with current_store(config) as store:
        remove_source(config, store, name)
    console.print(f"Removed source [bold]{name}[/]")


@alias_app.command("add")
def alias_add(
    name: Annotated[str, typer.Argument(help="The source.")],
    alias: Annotated[str, typer.Argument(help="Another name users may write as @alias.")],
) -> None:
    """Give a source another name, in the configuration file and the metadata store."""
    from catalog.source_aliases import add_alias

    config = settings()
    with current_store(config) as store:
        source = add_alias(config, store, name, alias)
    console.print(f"Source [bold]{source}[/] is now also @{alias}")


@alias_app.command("remove")
def alias_remove(
    name: Annotated[str, typer.Argument(help="The source.")],
    alias: Annotated[str, typer.Argument(help="The alias to take away.")],
) -> None:
    """Take an alias away from a source, in the configuration file and the metadata store."""
    from catalog.source_aliases import remove_alias

    config = settings()
    with current_store(config) as store:
        source = remove_alias(config, store, name, alias)
    console.print(f"Source [bold]{source}[/] is no longer @{alias}")
