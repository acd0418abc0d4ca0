"""Table notes: knowledge users attached to tables, what they are attached to, and their edits and deletions.

Which notes a person may read is decided by the caller (search/notes.py); the queries here only narrow by
table, database, deletion and authorship.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from core.store.models import Note, NoteTable, Source, SourceTable


@dataclass(frozen=True)
class Attachment:
    """One table a note is attached to, with the names needed to check and show it."""

    table_id: int
    source_id: int
    database: str
    schema: str
    table: str
    visible: bool


def tables_named(session: Session, source_id: int, name: str, schema: str | None) -> list[SourceTable]:
    """Tables of a source whose name (and schema, when given) match case-insensitively."""
    stmt = select(SourceTable).where(SourceTable.source_id == source_id, func.lower(SourceTable.name) == name.lower())
    if schema is not None:
        stmt = stmt.where(func.lower(SourceTable.schema_name) == schema.lower())
    return list(session.scalars(stmt.order_by(SourceTable.schema_name, SourceTable.name)))


def add(
    session: Session,
    *,
    text: str,
    author: tuple[str, str],
    private: bool,
    table_ids: Sequence[int],
    workspace_id: str | None,
    channel_id: str | None,
    thread_id: str | None,
) -> Note:
    """A new note attached to the tables; its search index (tsv, embedding) is written separately."""
    note = Note(
        text=text,
        author_platform=author[0],
        author_id=author[1],
        private=private,
        workspace_id=workspace_id,
        channel_id=channel_id,
        thread_id=thread_id,
        tsv=func.to_tsvector("simple", ""),
    )
    session.add(note)
    session.flush()
    session.add_all(NoteTable(note_id=note.id, table_id=t) for t in dict.fromkeys(table_ids))
    session.flush()
    return note


def live(session: Session, note_id: int) -> Note | None:
    """A note that has not been deleted."""
    return session.scalars(select(Note).where(Note.id == note_id, Note.deleted_at.is_(None))).first()


def texts(session: Session, note_ids: Sequence[int]) -> dict[int, str]:
    """The text of each of `note_ids`."""
    if not note_ids:
        return {}
    return dict(session.execute(select(Note.id, Note.text).where(Note.id.in_(list(note_ids)))).tuples().all())


def attachments(session: Session, note_ids: Sequence[int]) -> dict[int, list[Attachment]]:
    """note id → the tables it is attached to, ordered by database, schema and name."""
    if not note_ids:
        return {}
    stmt = (
        select(
            NoteTable.note_id,
            SourceTable.id,
            SourceTable.source_id,
            Source.name,
            SourceTable.schema_name,
            SourceTable.name,
            SourceTable.visible,
        )
        .join(SourceTable, SourceTable.id == NoteTable.table_id)
        .join(Source, Source.id == SourceTable.source_id)
        .where(NoteTable.note_id.in_(note_ids))
        .order_by(NoteTable.note_id, Source.name, SourceTable.schema_name, SourceTable.name)
    )
    found: dict[int, list[Attachment]] = {}
    for note_id, table_id, source_id, database, schema, table, visible in session.execute(stmt).all():
        found.setdefault(note_id, []).append(Attachment(table_id, source_id, database, schema, table, visible))
    return found


def live_notes(
    session: Session,
    *,
    reader: tuple[str, str] | None,
    every_private: bool,
    source_id: int | None = None,
    table_id: int | None = None,
) -> list[Note]:
    """Live notes, newest first: shared ones, private ones of `reader` (all private ones with `every_private`),
    narrowed to those attached to a table of `source_id` or to `table_id`."""
    stmt = select(Note).where(Note.deleted_at.is_(None))
    if not every_private:
        shared = Note.private.is_(False)
        if reader is None:
            stmt = stmt.where(shared)
        else:
            stmt = stmt.where(or_(shared, (Note.author_platform == reader[0]) & (Note.author_id == reader[1])))
    if table_id is not None:
        stmt = stmt.where(Note.id.in_(select(NoteTable.note_id).where(NoteTable.table_id == table_id)))
    if source_id is not None:
        attached = (
            select(NoteTable.note_id)
            .join(SourceTable, SourceTable.id == NoteTable.table_id)
            .where(SourceTable.source_id == source_id)
        )
        stmt = stmt.where(Note.id.in_(attached))
    return list(session.scalars(stmt.order_by(Note.created_at.desc(), Note.id.desc())))


def similarities(session: Session, note_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
    """Cosine similarity of each indexed note to a vector."""
    if not note_ids:
        return {}
    similarity = 1 - Note.embedding.cosine_distance(list(vector))
    stmt = select(Note.id, similarity).where(Note.id.in_(note_ids), Note.embedding.is_not(None))
    return {note_id: float(value) for note_id, value in session.execute(stmt).all()}


def set_text(session: Session, note_id: int, text: str, at: datetime) -> None:
    session.execute(update(Note).where(Note.id == note_id).values(text=text, edited_at=at))


def set_private(session: Session, note_id: int, private: bool, at: datetime) -> None:
    session.execute(update(Note).where(Note.id == note_id).values(private=private, edited_at=at))


def soft_delete(session: Session, note_id: int, at: datetime) -> None:
    """The note leaves search, cards and listings; the row stays for the record."""
    session.execute(update(Note).where(Note.id == note_id).values(deleted_at=at))
