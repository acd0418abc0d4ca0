"""Why these tables, one line under the answer in business terms (SPEC §4): which live table the answer read and
which of its copies the search ranked behind it and the answer left out, so the reader sees that a backup or a
dated snapshot with the same columns was not used.

Only copies the reader may see are named; a copy the user asked for on purpose is among the answer's warnings
instead (`workers.turns.answers.copy_warnings`).
"""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.store.models import SourceTable
from core.store.repositories import catalog as catalog_repo
from workers.tools.base import ToolContext

#: How a copy is named, by the role analysis gave it.
COPY_WORDS = {
    "backup": "the backup copy",
    "snapshot": "the dated snapshot",
    "staging": "the staging copy",
    "draft": "the draft copy",
    "partition": "the partition",
    "log": "the history table",
}
#: Copies named per live table; the rest are counted.
NAMED = 3


def sources_note(session: Session, context: ToolContext) -> str | None:
    """The line for the tables `context`'s SQL read, or None when no copy of them was left out."""
    live = {q: tid for q, tid in context.used_table_ids.items() if q not in context.copies_used}
    if not live:
        return None
    left_out: dict[int, list[SourceTable]] = defaultdict(list)
    for copy in catalog_repo.copies_of(session, list(live.values())):
        database = _database_of(live, copy.copy_of_id)
        if database is None or f"{database}.{copy.name}" in context.tables_used:
            continue
        if _may_see(context.principal, database, copy):
            left_out[int(copy.copy_of_id or 0)].append(copy)
    parts = []
    for qualified, table_id in live.items():
        copies = left_out.get(table_id)
        if copies:
            parts.append(_part(session, qualified, table_id, copies))
    if not parts:
        return None
    return "; ".join([parts[0], *(p[0].lower() + p[1:] for p in parts[1:])]) + "."


def _part(session: Session, qualified: str, table_id: int, copies: list[SourceTable]) -> str:
    table = session.get(SourceTable, table_id)
    name = qualified.split(".", 1)[1] if "." in qualified else qualified
    what = _what(table)
    named = [f"{COPY_WORDS.get(c.role, 'the copy')} {c.name}" for c in copies[:NAMED]]
    more = len(copies) - NAMED
    if more > 0:
        named.append(f"{more} more cop{'y' if more == 1 else 'ies'}")
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    verb = "was" if len(copies) == 1 else "were"
    return f"From the live {what}table ({name}); {listed} {verb} left out"


def _what(table: SourceTable | None) -> str:
    """The table's business words from its card ("order master "), or nothing."""
    purpose = str((table.card or {}).get("purpose") or "") if table is not None else ""
    words = purpose.split(";")[0].strip().rstrip(".")
    if not words or len(words) > 60 or words.upper() == (table.name if table else "").upper():
        return ""
    return words[0].lower() + words[1:] + " "


def _database_of(live: dict[str, int], table_id: int | None) -> str | None:
    for qualified, tid in live.items():
        if tid == table_id:
            return qualified.split(".", 1)[0]
    return None


def _may_see(principal: Principal, database: str, table: SourceTable) -> bool:
    return principal.may_see(database, table.name, table.schema_name or None)
