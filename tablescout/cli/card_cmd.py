"""`tablescout card NAME TABLE [--json]`: the table card as the model sees it, or as JSON."""

from __future__ import annotations

import difflib
import json
from typing import Annotated

import typer

from catalog.card_text import render_card
from core.errors import NotFoundError
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import notes as note_repo
from core.store.repositories import sources as source_repo
from tablescout.cli.context import console, current_store, settings


def card(
    name: Annotated[str, typer.Argument(help="Source name or alias.")],
    table: Annotated[str, typer.Argument(help="Table name, optionally schema.table.")],
    as_json: Annotated[bool, typer.Option("--json", help="The card as one JSON object.")] = False,
    columns: Annotated[str | None, typer.Option("--columns", help="Comma-separated columns to detail.")] = None,
    budget: Annotated[int, typer.Option("--budget", min=500, help="Characters the text may use.")] = 6000,
) -> None:
    """Show a table card: role, copy_of, columns with stats and codes, joins, notes."""
    config = settings()
    with current_store(config) as store, store.transaction() as session:
        source = source_repo.by_name_or_alias(session, name)
        if source is None:
            raise NotFoundError(f"there is no source named {name!r}; `tablescout source list` shows them")
        schema, _, bare = table.rpartition(".")
        row = catalog_repo.find_table(session, source.id, bare, schema if schema else None)
        if row is None or row.card is None:
            known = [t.name for t in catalog_repo.tables_of(session, source.id)]
            if not known:
                raise NotFoundError(f"{source.name} has not been analysed yet; run `tablescout analyze {source.name}`")
            close = difflib.get_close_matches(bare, known, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise NotFoundError(f"{source.name} has no table {table!r}{hint}")
        notes = note_repo.for_table(session, row.id, limit=5)
        data = dict(row.card)
        data["visible"] = row.visible
        data["notes"] = [
            {
                "id": n.id,
                "text": n.text,
                "author": f"{n.author_platform}:{n.author_id}",
                "created_at": n.created_at.isoformat(),
            }
            for n in notes
        ]
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    wanted = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
    text = render_card(data, budget=budget, columns=wanted, engine=data.get("engine"))
    if not data["visible"]:
        text = "(this table is no longer visible to the source account; it is kept for its notes)\n" + text
    if data["notes"]:
        text += "\nNotes:\n" + "\n".join(
            f"- {n['text']} ({n['author']}, {n['created_at'][:10]})" for n in data["notes"]
        )
    console.print(text, markup=False, highlight=False)
