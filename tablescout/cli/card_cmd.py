"""`tablescout card NAME TABLE [--json] [--user ID]`: the table card as the model sees it, or as JSON.

Without `--user` the operator's view (everything); with it, the card as that chat user's turn would show it: a
table or view they may not see answers like a missing one, links, code meanings and notes that come from tables
they may not see are left out, and where their row filters or column masks apply, counts and values are those
their own SQL would read.
"""

from __future__ import annotations

import difflib
import json
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from core.errors import NotFoundError
from tablescout.cli.context import console, current_store, principal_for, settings, store_reads

if TYPE_CHECKING:
    from core.config.settings import Settings


def card(
    name: Annotated[str, typer.Argument(help="Source name or alias.")],
    table: Annotated[str, typer.Argument(help="Table name, optionally schema.table.")],
    as_json: Annotated[bool, typer.Option("--json", help="The card as one JSON object.")] = False,
    columns: Annotated[str | None, typer.Option("--columns", help="Comma-separated columns to detail.")] = None,
    budget: Annotated[int, typer.Option("--budget", min=500, help="Characters the text may use.")] = 6000,
    user: Annotated[str | None, typer.Option("--user", help="Show the card as slack:ID or teams:ID sees it.")] = None,
) -> None:
    """Show a table card: role, copy_of, columns with stats and codes, joins, notes."""
    # Imported here, not at the top, so that building the command line does not load the card code.
    from catalog.card_text import render_card

    config = settings()
    data = _operator_card(config, name, table) if user is None else _user_card(config, name, table, user)
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


def _missing(source: str, table: str, known: list[str]) -> NotFoundError:
    """The error for a table that is not there (or not to be seen), with the closest names seen."""
    if not known:
        return NotFoundError(f"{source} has not been analysed yet; run `tablescout analyze {source}`")
    close = difflib.get_close_matches(table.rpartition(".")[2], known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return NotFoundError(f"{source} has no table {table!r}{hint}")


def _no_source(name: str) -> NotFoundError:
    return NotFoundError(f"there is no source named {name!r}; `tablescout source list` shows them")


def _with_notes(card: dict[str, Any], visible: bool, notes: list[tuple[int, str, str, datetime]]) -> dict[str, Any]:
    data = dict(card)
    data["visible"] = visible
    data["notes"] = [
        {"id": note_id, "text": text, "author": author, "created_at": created.isoformat()}
        for note_id, text, author, created in notes
    ]
    return data


def _operator_card(config: Settings, name: str, table: str) -> dict[str, Any]:
    """The card as the operator sees it (everything), read with plain SQL (core.store.light_reads)."""
    from core.store import light_reads

    with store_reads(config) as conn:
        source = light_reads.source_by_name_or_alias(conn, name)
        if source is None:
            raise _no_source(name)
        schema, _, bare = table.rpartition(".")
        row = light_reads.find_table(conn, source.id, bare, schema if schema else None)
        if row is None or row.card is None:
            raise _missing(source.name, table, light_reads.table_names(conn, source.id))
        notes = [(n.id, n.text, n.author, n.created_at) for n in light_reads.shared_notes(conn, row.id)]
    return _with_notes(row.card, row.visible, notes)


def _user_card(config: Settings, name: str, table: str, user: str) -> dict[str, Any]:
    """The card as a chat user's turn would show it: their grants, row filters and column masks applied."""
    from core.cards.card_view import card_for_principal
    from core.store.repositories import catalog as catalog_repo
    from core.store.repositories import sources as source_repo
    from search.notes import notes_for_card
    from workers.viewer_reads import SqlViewerReads

    with current_store(config) as store, store.transaction() as session:
        principal, viewer = principal_for(session, config, user)
        source = source_repo.by_name_or_alias(session, name)
        if source is None or not principal.may_see(source.name):
            raise _no_source(name)
        database = source.name
        schema, _, bare = table.rpartition(".")
        row = catalog_repo.find_table(session, source.id, bare, schema if schema else None)
        if row is not None and not principal.may_see_table(database, row):
            row = None  # reads exactly like a table that does not exist
        if row is None or row.card is None:
            known = [t.name for t in catalog_repo.tables_of(session, source.id) if principal.may_see_table(database, t)]
            raise _missing(source.name, table, known)
        facts = SqlViewerReads(session, config, principal).table_facts(database, row, "full")
        card = card_for_principal(principal, database, dict(row.card), facts)
        notes = [(n.id, n.text, n.author, n.created_at) for n in notes_for_card(session, principal, row.id, viewer)]
        return _with_notes(card, row.visible, notes)
