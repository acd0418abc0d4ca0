"""`tablescout note add|list|edit|delete`: table notes (SPEC §5) from the command line.

Without `--user` the command acts as the operator: it sees every note and may change any of them, and notes it
adds are written by `operator:<login name>`. With `--user slack:ID` it acts exactly as that chat user would.
`note list --json` prints one array of {"id", "database", "tables", "text", "author", "private", "created_at",
"edited_at"}; `note add --json` prints {"id", "database", "tables", "private"}.
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from core.access.users import UserRef
from tablescout.cli.context import console, current_store, principal_for, settings, store_reads

if TYPE_CHECKING:
    from core.config.settings import Settings
    from core.store.light_reads import NoteRow
    from search.encoders import Vectors
    from search.notes import NoteView

# search.notes and search.encoders are imported inside the commands, so that building the command line does not
# load them.

app = typer.Typer(help="Table notes: knowledge about tables that search and answers use.", no_args_is_help=True)

UserOption = Annotated[str | None, typer.Option("--user", help="Act as slack:ID or teams:ID (default: operator).")]


def operator_author() -> UserRef:
    return UserRef("operator", getpass.getuser())


class _OnFirstUse:
    """The embedding model, loaded only when a note is indexed: a refused note is answered at once."""

    def __init__(self, config: Settings) -> None:
        self._config = config
        self.name: str = config.embedding_encoder

    def embed(self, texts: Sequence[str]) -> Vectors:
        from search.encoders import embedder_for

        return embedder_for(self._config).embed(texts)


@app.command("add")
def add(
    database: Annotated[str, typer.Argument(help="Database name or alias.")],
    tables: Annotated[str, typer.Argument(help="Table name(s), comma-separated; optionally schema.table.")],
    text: Annotated[str, typer.Argument(help="What to remember about the table(s).")],
    user: UserOption = None,
    private: Annotated[bool, typer.Option("--private", help="Only the author sees the note.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The saved note as one JSON object.")] = False,
) -> None:
    """Attach a note to one or more tables of a database."""
    from search.notes import save_note

    config = settings()
    embedder = _OnFirstUse(config)
    with current_store(config) as store, store.transaction() as session:
        principal, viewer = principal_for(session, config, user)
        saved = save_note(
            session,
            principal,
            embedder,
            database=database,
            tables=tables.split(","),
            text=text,
            author=viewer or operator_author(),
            private=private,
        )
    if as_json:
        body = {"id": saved.id, "database": saved.database, "tables": saved.tables, "private": saved.private}
        typer.echo(json.dumps(body, ensure_ascii=False))
        return
    where = ", ".join(f"{saved.database}.{t}" for t in saved.tables)
    console.print(f"Saved note #{saved.id} on {where}" + (" (private)" if saved.private else ""), markup=False)


@app.command("list")
def list_(
    database: Annotated[str | None, typer.Argument(help="Only notes on this database.")] = None,
    table: Annotated[str | None, typer.Argument(help="Only notes on this table.")] = None,
    user: UserOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
) -> None:
    """Show the notes you may read, newest first."""
    config = settings()
    views: Sequence[NoteView | NoteRow]
    if user is None and database is None and table is None:  # every note, as the operator reads them: plain SQL, no ORM
        from core.store.light_reads import live_notes

        with store_reads(config) as conn:
            views = live_notes(conn)
    else:
        from search.notes import list_notes

        with current_store(config) as store, store.transaction() as session:
            principal, viewer = principal_for(session, config, user)
            views = list_notes(session, principal, viewer, database=database, table=table)
    if as_json:
        typer.echo(json.dumps([v.contract() for v in views], indent=2, ensure_ascii=False))
        return
    if not views:
        console.print("No notes.")
        return
    console.print(_table(views))


def _table(views: Sequence[NoteView | NoteRow]) -> Table:
    # Note text is untrusted: cells are plain Text, so nothing in a note is read as console markup.
    table = Table("id", "database", "tables", "author", "created", "text")
    table.columns[5].overflow = "fold"
    for v in views:
        created = v.created_at.strftime("%Y-%m-%d %H:%M") + (" (edited)" if v.edited_at else "")
        text = v.text + ("  [private]" if v.private else "")
        table.add_row(str(v.id), Text(v.database), Text(", ".join(v.tables)), Text(v.author), created, Text(text))
    return table


@app.command("edit")
def edit(
    note_id: Annotated[int, typer.Argument(metavar="ID", help="Note id (see `tablescout note list`).")],
    text: Annotated[str, typer.Argument(help="The new text.")],
    user: UserOption = None,
    private: Annotated[
        bool | None, typer.Option("--private/--shared", help="Make the note private or share it.")
    ] = None,
) -> None:
    """Replace a note's text (its author or an admin)."""
    from search.notes import edit_note

    config = settings()
    embedder = _OnFirstUse(config)
    with current_store(config) as store, store.transaction() as session:
        principal, viewer = principal_for(session, config, user)
        view = edit_note(session, principal, viewer or operator_author(), embedder, note_id, text=text, private=private)
    console.print(f"Edited note #{view.id}" + (" (private)" if view.private else ""), markup=False)


@app.command("delete")
def delete(
    note_id: Annotated[int, typer.Argument(metavar="ID", help="Note id (see `tablescout note list`).")],
    user: UserOption = None,
) -> None:
    """Delete a note (its author or an admin); it leaves search and cards."""
    from search.notes import delete_note

    config = settings()
    with current_store(config) as store, store.transaction() as session:
        principal, viewer = principal_for(session, config, user)
        view = delete_note(session, principal, viewer or operator_author(), note_id)
    console.print(f"Deleted note #{view.id} on {', '.join(view.tables)}", markup=False)
