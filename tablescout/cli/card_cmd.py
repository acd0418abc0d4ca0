"""`tablescout card NAME TABLE [--json] [--user ID]`: the table card as the model sees it, or as JSON.

Without `--user` the operator's view (everything); with it, the card as that chat user's turn would show it: a
table or view they may not see answers like a missing one, links, code meanings and notes that come from tables
they may not see are left out, and where their row filters or column masks apply, counts and values are those
their own SQL would read.
"""

from __future__ import annotations

import difflib
import json
from typing import Annotated

import typer

from core.errors import NotFoundError
from tablescout.cli.context import console, current_store, settings
from tablescout.cli.search_cmd import principal_for


def card(
    name: Annotated[str, typer.Argument(help="Source name or alias.")],
    table: Annotated[str, typer.Argument(help="Table name, optionally schema.table.")],
    as_json: Annotated[bool, typer.Option("--json", help="The card as one JSON object.")] = False,
    columns: Annotated[str | None, typer.Option("--columns", help="Comma-separated columns to detail.")] = None,
    budget: Annotated[int, typer.Option("--budget", min=500, help="Characters the text may use.")] = 6000,
    user: Annotated[str | None, typer.Option("--user", help="Show the card as slack:ID or teams:ID sees it.")] = None,
) -> None:
    """Show a table card: role, copy_of, columns with stats and codes, joins, notes."""
    # Imported here, not at the top, so that building the command line does not load the store, card and search code.
    from catalog.card_text import render_card
    from core.store.repositories import catalog as catalog_repo
    from core.store.repositories import sources as source_repo

    config = settings()
    with current_store(config) as store, store.transaction() as session:
        principal, viewer = principal_for(session, config, user)
        source = source_repo.by_name_or_alias(session, name)
        if source is None or not principal.may_see(source.name):
            raise NotFoundError(f"there is no source named {name!r}; `tablescout source list` shows them")
        database = source.name
        schema, _, bare = table.rpartition(".")
        row = catalog_repo.find_table(session, source.id, bare, schema if schema else None)
        if row is not None and not principal.may_see_table(database, row):
            row = None  # reads exactly like a table that does not exist
        if row is None or row.card is None:
            known = [t.name for t in catalog_repo.tables_of(session, source.id) if principal.may_see_table(database, t)]
            if not known:
                raise NotFoundError(f"{source.name} has not been analysed yet; run `tablescout analyze {source.name}`")
            close = difflib.get_close_matches(bare, known, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise NotFoundError(f"{source.name} has no table {table!r}{hint}")
        if principal.operator:
            from core.store.repositories.notes import for_table

            data = dict(row.card)
            shared = for_table(session, row.id)
            notes = [(n.id, n.text, f"{n.author_platform}:{n.author_id}", n.created_at) for n in shared]
        else:  # the search and SQL code, only for a chat user's view
            from core.cards.card_view import card_for_principal
            from search.notes import notes_for_card
            from workers.viewer_reads import SqlViewerReads

            facts = SqlViewerReads(session, config, principal).table_facts(database, row, "full")
            data = card_for_principal(principal, database, dict(row.card), facts)
            shown = notes_for_card(session, principal, row.id, viewer)
            notes = [(n.id, n.text, n.author, n.created_at) for n in shown]
        data["visible"] = row.visible
        data["notes"] = [
            {"id": note_id, "text": text, "author": author, "created_at": created.isoformat()}
            for note_id, text, author, created in notes
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
