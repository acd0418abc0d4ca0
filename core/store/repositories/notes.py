"""Table notes: knowledge users attached to tables."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.store.models import Note, NoteTable


def for_table(session: Session, table_id: int, *, limit: int = 5) -> list[Note]:
    """Shared (not private) live notes attached to a table, newest first."""
    stmt = (
        select(Note)
        .join(NoteTable, NoteTable.note_id == Note.id)
        .where(NoteTable.table_id == table_id, Note.deleted_at.is_(None), Note.private.is_(False))
        .order_by(Note.created_at.desc(), Note.id.desc())
        .limit(limit)
    )
    return list(session.scalars(stmt))
