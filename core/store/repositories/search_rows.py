"""The rows a table search reads besides its rankings: the registered sources, the tables by id (their cards read
only for the tables shown), their column names, the notes a viewer may read on them, and copies' live tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ARRAY, Integer, any_, bindparam, case, func, literal, or_, select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session, defer
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from core.access.users import UserRef
from core.store.models import Note, NoteTable, Source, SourceTable, TableColumn

#: Ids: a list, or the bind parameter of a statement built once and run with its values (`search_batch.rankings`).
Ids = Sequence[int] | BindParameter[Any]


def any_id(ids: Ids) -> ColumnElement[Any]:
    """`= ANY(array)`: one statement text (and so one prepared statement) whatever the number of ids; an IN list
    is a text per length."""
    if isinstance(ids, BindParameter):
        return any_(ids)
    return any_(literal(list(ids), ARRAY(Integer)))


def written_count(name: str, value: int) -> Any:
    """A LIMIT written into the statement's text at execution: a prepared statement's generic plan would otherwise
    guess it."""
    return bindparam(name, value, type_=Integer, literal_execute=True)


#: What a search leaves unread on the tables it ranks: the card until a table is shown (`load_cards`), and what it
#: never reads (the rendered card, the analysis facts, the copy evidence). Each is a large value the server would
#: otherwise decompress for each of the few hundred ranked tables.
_UNREAD = (
    defer(SourceTable.card),
    defer(SourceTable.card_text),
    defer(SourceTable.facts),
    defer(SourceTable.copy_evidence),
)


def visible_notes(platform: str | None, user_id: str | None) -> Any:
    """The condition on `Note` for the notes a viewer may read: the shared ones, and their own private ones (no
    private ones without a viewer, `platform` None)."""
    shared = Note.private.is_(False)
    if platform is None:
        return shared
    return or_(shared, (Note.author_platform == platform) & (Note.author_id == user_id))


def sources(session: Session) -> list[Source]:
    """Every registered source, by name."""
    return list(session.scalars(select(Source).order_by(Source.name)))


def tables(session: Session, table_ids: Sequence[int], *, with_cards: bool = True) -> dict[int, SourceTable]:
    """The tables by id. `with_cards=False` leaves each card unread until `load_cards` (or, one statement per
    table, until it is first used): a search ranks a few hundred tables and shows a few, and reading every card
    is most of a search's store time at 10,000 tables."""
    if not table_ids:
        return {}
    stmt = select(SourceTable).where(SourceTable.id.in_(table_ids))
    if not with_cards:
        stmt = stmt.options(*_UNREAD)
    return {t.id: t for t in session.scalars(stmt)}


def tables_and_column_names(
    session: Session, table_ids: Sequence[int], named: Sequence[int]
) -> tuple[dict[int, SourceTable], dict[int, frozenset[str]]]:
    """`tables(session, table_ids, with_cards=False)` and `column_names(session, named)` in one statement: each
    row carries its column names when its table is among `named` (a table without columns has no entry)."""
    if not table_ids:
        return {}, {}
    wanted = list(dict.fromkeys(named))
    names = (
        select(func.array_agg(func.lower(TableColumn.name)))
        .where(TableColumn.table_id == SourceTable.id)
        .correlate(SourceTable)
        .scalar_subquery()
    )
    stmt = (
        select(SourceTable, case((SourceTable.id == any_id(wanted), names), else_=None))
        .where(SourceTable.id == any_id(table_ids))
        .options(*_UNREAD)
    )
    rows: dict[int, SourceTable] = {}
    columns: dict[int, frozenset[str]] = {}
    for row, found in session.execute(stmt).all():
        rows[row.id] = row
        if found is not None:
            columns[row.id] = frozenset(found)
    return rows, columns


def column_names(session: Session, table_ids: Sequence[int]) -> dict[int, frozenset[str]]:
    """Each table's column names in lower case, in one statement."""
    if not table_ids:
        return {}
    names = func.array_agg(func.lower(TableColumn.name))
    stmt = (
        select(TableColumn.table_id, names)
        .where(TableColumn.table_id == any_id(table_ids))
        .group_by(TableColumn.table_id)
    )
    return {int(table_id): frozenset(found) for table_id, found in session.execute(stmt).all()}


def load_cards(session: Session, rows: Mapping[int, SourceTable], table_ids: Sequence[int]) -> None:
    """Read the cards of `table_ids` (rows from `tables(..., with_cards=False)`) in one statement."""
    wanted = [t for t in dict.fromkeys(table_ids) if t in rows and "card" in sa_inspect(rows[t]).unloaded]
    if not wanted:
        return
    for table_id, card in session.execute(
        select(SourceTable.id, SourceTable.card).where(SourceTable.id == any_id(wanted))
    ):
        set_committed_value(rows[table_id], "card", card)


def notes_for(
    session: Session, table_ids: Sequence[int], viewer: UserRef | None, per_table: int
) -> dict[int, list[Note]]:
    """Up to `per_table` notes a viewer may read per table, newest first."""
    if not table_ids:
        return {}
    platform, user_id = viewer if viewer else (None, None)
    stmt = (
        select(NoteTable.table_id, Note)
        .join(Note, Note.id == NoteTable.note_id)
        .where(NoteTable.table_id.in_(table_ids), Note.deleted_at.is_(None), visible_notes(platform, user_id))
        .order_by(Note.created_at.desc(), Note.id.desc())
    )
    found: dict[int, list[Note]] = {}
    for table_id, note in session.execute(stmt).all():
        bucket = found.setdefault(table_id, [])
        if len(bucket) < per_table:
            bucket.append(note)
    return found
