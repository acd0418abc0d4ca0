"""Table notes (SPEC §5): saving, listing, editing and deleting the knowledge users leave about tables.

One service for the model's `save_note` tool, the chat adapters and `tablescout note`. The principal comes from
the caller's trusted context and decides everything: which tables a note may be attached to, which notes are
listed or shown with a card, and who may change them. Note text is untrusted data: it is stored and indexed as
written and never read for instructions, names or permissions.

Who sees a note: someone who may see every table it is attached to (a view counts with everything it reads), and
for a private note only its author (the operator at the command line sees everything). The rule is the same
wherever a note appears: `note list`, a card, search candidates and note matches in search. A note attached to a
table the reader may not see is not shown at all, not even with the tables they may see, since its text may be
about the hidden one. Who may edit or delete it: its author, or an admin who can see it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.access.users import UserRef
from core.errors import NotFoundError, TablescoutError
from core.store.models import Note, Source, SourceTable
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import notes as note_repo
from core.store.repositories import search_queries as queries
from core.store.repositories import sources as source_repo
from search.encoders import Embedder
from search.note_masks import reveals_masked

MAX_NOTE_CHARS = 2000
MAX_NOTE_TABLES = 10
CARD_NOTES = 5
#: Notes read beyond those shown per search candidate, so that notes hidden from the reader leave room for others.
NOTES_LOOKED_AT = 20
_AUTHOR_LIMITS = (20, 128)  # the store's column sizes for author platform and id


class NoteError(TablescoutError):
    """A note cannot be saved or changed as asked; nothing was written."""


class NoteNotFoundError(NoteError, NotFoundError):
    """The database, table or note does not exist, or the asker may not see it (the two read alike)."""


class NotePermissionError(NoteError):
    """The asker can see the note but is neither its author nor an admin."""


@dataclass(frozen=True)
class SavedNote:
    id: int
    database: str
    tables: list[str]
    private: bool


@dataclass(frozen=True)
class NoteView:
    """A note as a reader sees it."""

    id: int
    database: str
    tables: list[str]
    text: str
    author: str
    private: bool
    created_at: datetime
    edited_at: datetime | None
    workspace_id: str | None = None
    channel_id: str | None = None
    thread_id: str | None = None

    def contract(self) -> dict[str, Any]:
        """The stable JSON form (`tablescout note list --json`)."""
        return {
            "id": self.id,
            "database": self.database,
            "tables": self.tables,
            "text": self.text,
            "author": self.author,
            "private": self.private,
            "created_at": self.created_at.isoformat(),
            "edited_at": self.edited_at.isoformat() if self.edited_at else None,
        }


def _now() -> datetime:
    return datetime.now(UTC)


def qualified(schema: str, table: str) -> str:
    return f"{schema}.{table}" if schema else table


def _clean_text(text: str) -> str:
    body = text.strip()
    if not body:
        raise NoteError("the note is empty; write what should be remembered about the table")
    if len(body) > MAX_NOTE_CHARS:
        raise NoteError(f"the note is {len(body)} characters long; keep it under {MAX_NOTE_CHARS}")
    if "\x00" in body:
        raise NoteError("the note contains a NUL character")
    return body


def _check_author(author: UserRef) -> None:
    platform, user_id = author
    if not platform or not user_id:
        raise NoteError("a note needs an author (platform and user id)")
    if len(platform) > _AUTHOR_LIMITS[0] or len(user_id) > _AUTHOR_LIMITS[1]:
        raise NoteError(f"author {platform}:{user_id} is too long to store")


def _database(session: Session, principal: Principal, name: str) -> Source:
    """A database by name or alias that the principal may see; hidden and unknown ones read alike."""
    source = source_repo.by_name_or_alias(session, name)
    if source is not None and principal.may_see(source.name):
        return source
    seen = [s.name for s in source_repo.all_sources(session) if principal.may_see(s.name)]
    close = difflib.get_close_matches(name.lower(), [s.lower() for s in seen], n=3, cutoff=0.6)
    by_lower = {s.lower(): s for s in seen}
    hint = f"; did you mean {', '.join(by_lower[c] for c in close)}?" if close else ""
    raise NoteNotFoundError(f"there is no database {name!r} that you may see{hint}")


def _may_see(principal: Principal, database: str, row: SourceTable) -> bool:
    return principal.may_see_table(database, row)


def _table(
    session: Session, principal: Principal, source: Source, name: str, *, include_invisible: bool
) -> SourceTable:
    """A table by exact name (any case, optionally schema.table) that the principal may see.

    A table the principal may not see reads exactly like one that does not exist, and suggestions come only
    from tables the principal may see."""
    wanted = name.strip()
    rows = note_repo.tables_named(session, source.id, wanted, None)
    if not rows and "." in wanted:
        schema, _, bare = wanted.rpartition(".")
        rows = note_repo.tables_named(session, source.id, bare, schema)
    rows = [r for r in rows if (r.visible or include_invisible) and _may_see(principal, source.name, r)]
    written = [r for r in rows if qualified(r.schema_name, r.name) == wanted]
    if len(written) == 1:
        return written[0]  # `ORD_MST` is the default schema's table beside `rpt.ORD_MST`, as permissions name it
    exact = [r for r in rows if r.name == wanted or qualified(r.schema_name, r.name) == wanted]
    if len(exact) == 1:
        return exact[0]
    if len(rows) == 1:
        return rows[0]
    if rows:
        options = ", ".join(qualified(r.schema_name, r.name) for r in rows)
        raise NoteNotFoundError(f"{name!r} names several tables in {source.name}; write one of {options}")
    raise NoteNotFoundError(
        f"no table {wanted!r} that you may see in {source.name}{_suggest(session, principal, source, wanted)}"
    )


def _suggest(session: Session, principal: Principal, source: Source, name: str) -> str:
    seen = {
        qualified(r.schema_name, r.name).lower(): qualified(r.schema_name, r.name)
        for r in catalog_repo.tables_of(session, source.id)
        if r.visible and _may_see(principal, source.name, r)
    }
    seen |= {key.rpartition(".")[2]: value for key, value in list(seen.items())}
    close = difflib.get_close_matches(name.lower(), list(seen), n=3, cutoff=0.6)
    names = list(dict.fromkeys(seen[c] for c in close))
    return f"; did you mean {', '.join(names)}?" if names else ""


def save_note(
    session: Session,
    principal: Principal,
    embedder: Embedder,
    *,
    database: str,
    tables: Sequence[str],
    text: str,
    author: UserRef,
    private: bool,
    workspace_id: str | None = None,
    channel_id: str | None = None,
    thread_id: str | None = None,
) -> SavedNote:
    """Attach a note to tables of one database and index it; the caller commits.

    Raises NoteError (empty or over-long text, no tables, too many) or NoteNotFoundError (a database or table
    that does not exist or that the principal may not see); nothing is written then."""
    body = _clean_text(text)
    _check_author(author)
    names = [t.strip() for t in ([tables] if isinstance(tables, str) else tables) if t.strip()]
    if not names:
        raise NoteError("name the table the note is about")
    if len(names) > MAX_NOTE_TABLES:
        raise NoteError(f"a note may be attached to at most {MAX_NOTE_TABLES} tables")
    source = _database(session, principal, database)
    rows = list(
        {r.id: r for r in (_table(session, principal, source, n, include_invisible=False) for n in names)}.values()
    )
    note = note_repo.add(
        session,
        text=body,
        author=author,
        private=private,
        table_ids=[r.id for r in rows],
        workspace_id=workspace_id,
        channel_id=channel_id,
        thread_id=thread_id,
    )
    from search.indexing import index_note  # the indexing code, only when a note is written (not to list them)

    index_note(session, note.id, body, embedder)
    return SavedNote(note.id, source.name, [qualified(r.schema_name, r.name) for r in rows], private)


def _is_author(note: Note, viewer: UserRef | None) -> bool:
    return viewer is not None and (note.author_platform, note.author_id) == tuple(viewer)


def _all_seen(
    principal: Principal, attached: Sequence[note_repo.Attachment], rows: dict[int, SourceTable], text: str
) -> bool:
    return bool(attached) and all(
        a.table_id in rows
        and principal.may_see_table(a.database, rows[a.table_id])
        and not reveals_masked(principal, a.database, rows[a.table_id], text)
        for a in attached
    )


def _attached_rows(session: Session, attached: dict[int, list[note_repo.Attachment]]) -> dict[int, SourceTable]:
    return queries.tables(session, sorted({a.table_id for items in attached.values() for a in items}))


def _readable(
    principal: Principal,
    viewer: UserRef | None,
    note: Note,
    attached: Sequence[note_repo.Attachment],
    rows: dict[int, SourceTable],
) -> bool:
    if principal.operator:
        return True
    if note.private and not _is_author(note, viewer):
        return False
    return _all_seen(principal, attached, rows, note.text)


def seen_in_full(session: Session, principal: Principal, note_ids: Sequence[int]) -> set[int]:
    """Of `note_ids`, the notes whose every table the principal may see (privacy is the caller's filter)."""
    if principal.operator:
        return set(note_ids)
    attached = note_repo.attachments(session, list(dict.fromkeys(note_ids)))
    rows = _attached_rows(session, attached)
    texts = note_repo.texts(session, list(attached))
    return {n for n, items in attached.items() if _all_seen(principal, items, rows, texts.get(n, ""))}


def readable_notes(
    session: Session, principal: Principal, viewer: UserRef | None, table_ids: Sequence[int], per_table: int
) -> dict[int, list[Note]]:
    """Up to `per_table` notes per table that the principal may read there, newest first (search candidates)."""
    found = queries.notes_for(session, table_ids, viewer, per_table=per_table + NOTES_LOOKED_AT)
    seen = seen_in_full(session, principal, [n.id for notes in found.values() for n in notes])
    return {t: [n for n in notes if n.id in seen][:per_table] for t, notes in found.items()}


def _view(note: Note, attached: Sequence[note_repo.Attachment]) -> NoteView:
    return NoteView(
        id=note.id,
        database=attached[0].database if attached else "",
        tables=[qualified(a.schema, a.table) for a in attached],
        text=note.text,
        author=f"{note.author_platform}:{note.author_id}",
        private=note.private,
        created_at=note.created_at,
        edited_at=note.edited_at,
        workspace_id=note.workspace_id,
        channel_id=note.channel_id,
        thread_id=note.thread_id,
    )


def _readable_views(
    session: Session, principal: Principal, viewer: UserRef | None, notes: Sequence[Note]
) -> list[NoteView]:
    attached = note_repo.attachments(session, [n.id for n in notes])
    rows = _attached_rows(session, attached)
    return [
        _view(n, attached.get(n.id, [])) for n in notes if _readable(principal, viewer, n, attached.get(n.id, []), rows)
    ]


def list_notes(
    session: Session,
    principal: Principal,
    viewer: UserRef | None,
    *,
    database: str | None = None,
    table: str | None = None,
) -> list[NoteView]:
    """Notes the principal may read, newest first, optionally only those on one database or table.

    Notes of tables the source account no longer sees are listed too (they are kept)."""
    if table is not None and database is None:
        raise NoteError("name the database of the table whose notes to list")
    source_id = table_id = None
    if database is not None:
        source = _database(session, principal, database)
        source_id = source.id
        if table is not None:
            table_id = _table(session, principal, source, table, include_invisible=True).id
    notes = note_repo.live_notes(
        session, reader=viewer, every_private=principal.operator, source_id=source_id, table_id=table_id
    )
    return _readable_views(session, principal, viewer, notes)


def notes_for_card(
    session: Session,
    principal: Principal,
    table_id: int,
    viewer: UserRef | None,
    *,
    limit: int = CARD_NOTES,
    relevant_to: Sequence[float] | None = None,
) -> list[NoteView]:
    """Up to `limit` notes shown with a table's card: the most relevant to the question vector first when one is
    given, newest first otherwise (and among equals). The caller has checked that the table may be seen."""
    notes = note_repo.live_notes(session, reader=viewer, every_private=principal.operator, table_id=table_id)
    views = _readable_views(session, principal, viewer, notes)
    if relevant_to is not None and views:
        score = note_repo.similarities(session, [v.id for v in views], relevant_to)
        rank = {v.id: i for i, v in enumerate(views)}
        views.sort(key=lambda v: (-round(score.get(v.id, -1.0), 3), rank[v.id]))
    return views[:limit]


def _changeable(
    session: Session, principal: Principal, viewer: UserRef | None, note_id: int, action: str
) -> tuple[Note, list[note_repo.Attachment]]:
    note = note_repo.live(session, note_id)
    by_note = note_repo.attachments(session, [note_id]) if note else {}
    attached = by_note.get(note_id, [])
    readable = note is not None and _readable(principal, viewer, note, attached, _attached_rows(session, by_note))
    if note is None or not (_is_author(note, viewer) or readable):
        raise NoteNotFoundError(f"there is no note #{note_id} that you may see")
    if not (_is_author(note, viewer) or principal.is_admin):
        raise NotePermissionError(f"only the author of note #{note_id} or an admin may {action} it")
    return note, attached


def edit_note(
    session: Session,
    principal: Principal,
    viewer: UserRef | None,
    embedder: Embedder,
    note_id: int,
    *,
    text: str | None = None,
    private: bool | None = None,
) -> NoteView:
    """Change a note's text (re-indexed) and/or whether it is private; its author or an admin only.

    Raises NoteError (bad text, nothing to change), NoteNotFoundError or NotePermissionError."""
    if text is None and private is None:
        raise NoteError("give the new text of the note, or whether it is private")
    body = _clean_text(text) if text is not None else None
    note, attached = _changeable(session, principal, viewer, note_id, "edit")
    now = _now()
    if body is not None and body != note.text:
        note_repo.set_text(session, note.id, body, now)
        from search.indexing import index_note

        index_note(session, note.id, body, embedder)
    if private is not None and private != note.private:
        note_repo.set_private(session, note.id, private, now)
    session.refresh(note)
    return _view(note, attached)


def delete_note(session: Session, principal: Principal, viewer: UserRef | None, note_id: int) -> NoteView:
    """Soft-delete a note (it leaves search, cards and listings); its author or an admin only.

    Raises NoteNotFoundError or NotePermissionError."""
    note, attached = _changeable(session, principal, viewer, note_id, "delete")
    note_repo.soft_delete(session, note.id, _now())
    return _view(note, attached)
