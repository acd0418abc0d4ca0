"""`save_note` (SPEC §5): attach what the user said about a table to that table.

Where the note is kept (channel, thread, private in a direct message) and who wrote it come from the turn; the
model chooses only the table(s) and passes the user's words on. The text is stored as data and never interpreted.
"""

from __future__ import annotations

from typing import Any

from search.notes import save_note
from workers.models.types import ToolSpec
from workers.tools.base import (
    Tool,
    ToolContext,
    ToolInputError,
    ToolOutput,
    list_argument,
    queryable_source,
    shown_table,
    text_argument,
)

NOTE_SPEC = ToolSpec(
    name="save_note",
    description=(
        "Save the user's knowledge about a table as a note on that table (or tables). text is what the user said, "
        "without 'remember this'."
    ),
    parameters={
        "type": "object",
        "properties": {
            "database": {"type": "string"},
            "table": {"type": "string", "description": "The table; several as a comma-separated list."},
            "text": {"type": "string"},
        },
        "required": ["database", "table", "text"],
    },
)


def run(context: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    label = text_argument(arguments, "database")
    text = text_argument(arguments, "text")
    tables = list_argument(arguments, "table")
    assert label is not None
    assert text is not None
    if not tables:
        raise ToolInputError("argument 'table' is required")
    source = queryable_source(context, label)
    conversation = context.conversation
    saved = save_note(
        context.session,
        context.principal,
        context.encoders.embedder,
        database=source.name,
        tables=tables,
        text=text,
        author=context.author,
        private=conversation.private,
        workspace_id=conversation.workspace_id,
        channel_id=conversation.channel_id,
        thread_id=conversation.thread_id,
    )
    names = [f"{saved.database}.{t}" for t in saved.tables]
    context.notes_saved.extend(n for n in names if n not in context.notes_saved)
    where = "private to you (written in a direct message)" if saved.private else "shared with everyone who may see it"
    return ToolOutput(f"saved note {saved.id} on {', '.join(names)}; {where}")


def _status(context: ToolContext, arguments: dict[str, Any]) -> str:
    table = shown_table(context, arguments, arguments.get("table"))
    return f"Saving a note on {table}…" if table else "Saving a note…"


NOTE_TOOL = Tool(NOTE_SPEC, run, _status)
