"""SQL on a stale copy runs fine and returns a wrong number, so run_sql refuses a copy unless the user asked
about that copy: named it, used its marker ("BAK", "202312") or its kind ("backup", "snapshot").

A month alone ("orders in December 2023") is not asking about the December 2023 snapshot: the live table holds
those orders too, and more correctly.

Permission comes first: when the statement reads a table the user may not see, the copy rule says nothing (run_sql's
permission check answers, naming only what the user wrote), so it never tells what a hidden table is a copy of;
and a copy whose live table the user may not see is refused without naming that table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.store.models import Source, SourceTable
from core.store.repositories import catalog as catalog_repo
from core.text.naming import COPY_ROLE_BY_WORD, affixes

ROLE_WORDS = {
    "backup": ("backup", "back-up", "back up", "bak"),
    "snapshot": ("snapshot",),
    "staging": ("staging", "temporary", "temp table", "working copy", "tmp"),
    "draft": ("draft", "test copy", "test table"),
}


def mentions(texts: Sequence[str], table: str, role: str) -> bool:
    """Does anything the user wrote ask about the copy `table` (of role `role`)?"""
    said = " ".join(texts).lower()
    if re.search(rf"(?<![a-z0-9_]){re.escape(table.lower())}(?![a-z0-9_])", said):
        return True
    phrases = [a.marker.lower() for a in affixes(table) if a.kind == "period" or a.marker.lower() in COPY_ROLE_BY_WORD]
    phrases += ROLE_WORDS.get(role, ())
    return any(re.search(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])", said) for p in phrases)


def copy_refusal(
    session: Session,
    principal: Principal,
    source: Source,
    user_texts: Sequence[str],
    names: Sequence[tuple[str | None, str]],
) -> str | None:
    """Why run_sql refuses a statement that reads the copies among `names` (schema, table as written) that the user
    did not ask about; None when it may run as far as copies go."""
    rows = [catalog_repo.find_table(session, source.id, name, schema) for schema, name in names]
    if any(row is not None and not principal.may_see_table(source.name, row) for row in rows):
        return None
    for row in rows:
        if row is None or row.copy_of_id is None or mentions(user_texts, row.name, row.role):
            continue
        live = session.get(SourceTable, row.copy_of_id)
        if live is None or not principal.may_see_table(source.name, live):
            return (
                f"refused: {row.name} is a {row.role} copy and may hold stale rows; query {row.name} only when the "
                "user asks about that copy."
            )
        return (
            f"refused: {row.name} is a {row.role} copy of {live.name} and may hold stale rows. Use {live.name}; "
            f"query {row.name} only when the user asks about that copy."
        )
    return None
