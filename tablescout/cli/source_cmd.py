"""`tablescout source add|list|remove`."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from catalog.registration import add_source, list_sources, remove_source
from tablescout.cli.context import console, current_store, settings

app = typer.Typer(help="Register source databases (use a read-only account).", no_args_is_help=True)


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="Short name users write as @name.")],
    url: Annotated[str, typer.Argument(help="SQLAlchemy URL; write passwords as ${ENV_VAR}.")],
    alias: Annotated[list[str] | None, typer.Option("--alias", help="Another name for @mentions.")] = None,
) -> None:
    """Register a source database: validates the URL and connects once before saving it."""
    config = settings()
    with current_store(config) as store:
        info = add_source(config, store, name, url, alias or [])
    console.print(f"Added source [bold]{name}[/] ({info.engine} {info.version})")


@app.command("list")
def list_(as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False) -> None:
    """Show registered sources with engine, version and analysis state."""
    config = settings()
    with current_store(config) as store:
        listings = list_sources(config, store)
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
            }
            for s in listings
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not listings:
        console.print("No sources yet. Add one with `tablescout source add NAME URL`.")
        return
    table = Table("name", "aliases", "engine", "url", "tables", "analysed", "state")
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
        )
    console.print(table)


@app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="The source to forget.")]) -> None:
    """Forget a source and everything analysed about it (its config entry too)."""
    config = settings()
    with current_store(config) as store:
        remove_source(config, store, name)
    console.print(f"Removed source [bold]{name}[/]")
