"""Tables, columns and join candidates of analysed sources."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, defer

from core.store.models import JoinCandidate, Source, SourceTable, TableColumn


def tables_of(session: Session, source_id: int) -> list[SourceTable]:
    return list(session.scalars(select(SourceTable).where(SourceTable.source_id == source_id)))


def copies_of(session: Session, table_ids: Sequence[int]) -> list[SourceTable]:
    """The visible tables analysis found to be copies (backups, snapshots, drafts) of the tables `table_ids`."""
    if not table_ids:
        return []
    stmt = (
        select(SourceTable)
        .where(SourceTable.copy_of_id.in_(list(table_ids)), SourceTable.visible)
        .order_by(SourceTable.copy_of_id, SourceTable.name)
    )
    return list(session.scalars(stmt))


def schema_names(session: Session, source_id: int) -> list[str]:
    """The distinct schema names of a source's tables ("" for the default schema), in no particular order."""
    found = session.scalars(select(SourceTable.schema_name).where(SourceTable.source_id == source_id).distinct())
    return [schema or "" for schema in found]


def find_table(session: Session, source_id: int, name: str, schema: str | None = None) -> SourceTable | None:
    """A table by name (exact first, then case-insensitive); schema '' means the default schema. A name without a
    schema that several schemas hold is the default schema's table, else the first schema's by name (never whichever
    row the store happens to read first)."""
    stmt = select(SourceTable).where(SourceTable.source_id == source_id)
    if schema is not None:
        stmt = stmt.where(SourceTable.schema_name == schema)
    candidates = list(session.scalars(stmt.where(func.lower(SourceTable.name) == name.lower())))
    exact = sorted((t for t in candidates if t.name == name), key=lambda t: (t.schema_name != "", t.schema_name))
    if exact:
        return exact[0]
    return candidates[0] if len(candidates) == 1 else None


#: The statement that writes a batch of tables' columns.
COPY_COLUMNS = (
    "COPY table_columns (table_id, ordinal, name, data_type, nullable, key_role, comment, profile) FROM STDIN"
)


def tables_by_name(session: Session, source_id: int) -> dict[tuple[str, str], SourceTable]:
    """The source's stored tables by (schema, name), read in one statement."""
    return {(t.schema_name, t.name): t for t in tables_of(session, source_id)}


def replace_columns(session: Session, columns: dict[int, Sequence[dict[str, Any]]]) -> None:
    """The columns of the tables `columns` names (table id → its columns), all of them written again: one DELETE
    and one INSERT of many rows for them all (a unit of work per column object, then a round trip per table, took
    most of a schema-only analysis's store time)."""
    if not columns:
        return
    session.execute(delete(TableColumn).where(TableColumn.table_id.in_(list(columns))))
    # COPY, in the session's own transaction: an INSERT of many rows through the ORM's bulk path took seconds per
    # thousand tables in building parameters alone.
    raw = session.connection().connection.driver_connection
    if not isinstance(raw, psycopg.Connection):  # the store always speaks psycopg (core.store.database)
        raise TypeError(f"the metadata store's driver connection is {type(raw).__name__}, not psycopg's")
    with raw.cursor() as cursor, cursor.copy(COPY_COLUMNS) as copy:
        for table_id, written in columns.items():
            for c in written:
                profile = c.get("profile")
                copy.write_row(
                    (
                        table_id,
                        c["ordinal"],
                        c["name"],
                        c["data_type"],
                        c.get("nullable", True),
                        c.get("key_role"),
                        c.get("comment"),
                        Jsonb(profile) if profile is not None else None,
                    )
                )


def mark_invisible(session: Session, source_id: int, listed: set[tuple[str, str]], now: datetime) -> list[str]:
    """Tables the source no longer lists leave search (their notes stay); returns their names."""
    # Names first: loading every visible row would read every card, for the few tables that went.
    names = select(SourceTable.id, SourceTable.schema_name, SourceTable.name).where(
        SourceTable.source_id == source_id, SourceTable.visible
    )
    ids = [i for i, schema, name in session.execute(names).all() if (schema, name) not in listed]
    found = select(SourceTable).where(SourceTable.id.in_(ids)).order_by(SourceTable.schema_name, SourceTable.name)
    gone = list(session.scalars(found)) if ids else []
    for table in gone:
        table.visible = False
        table.invisible_since = now
    session.flush()
    return [t.name for t in gone]


def replace_joins(session: Session, source_id: int, joins: Sequence[dict[str, Any]]) -> None:
    session.execute(delete(JoinCandidate).where(JoinCandidate.source_id == source_id))
    if joins:
        session.add_all(JoinCandidate(source_id=source_id, **j) for j in joins)
    session.flush()


def joins_of(session: Session, source_id: int) -> list[JoinCandidate]:
    return list(session.scalars(select(JoinCandidate).where(JoinCandidate.source_id == source_id)))


def record_analysis(session: Session, source_id: int, summary: str, at: datetime, version: str | None) -> None:
    values: dict[str, Any] = {"summary": summary, "analysed_at": at}
    if version:
        values["engine_version"] = version
    session.execute(update(Source).where(Source.id == source_id).values(**values))


def visible_tables_without_cards(session: Session, source_id: int) -> list[SourceTable]:
    """The visible tables of a source, their cards left unread (kind and view reads come with the row)."""
    stmt = (
        select(SourceTable)
        .where(SourceTable.source_id == source_id, SourceTable.visible)
        .options(defer(SourceTable.card), defer(SourceTable.card_text), defer(SourceTable.facts))
    )
    return list(session.scalars(stmt))


def declared_references(session: Session, source_id: int) -> list[tuple[int, int]]:
    """(referencing table id, referenced table id) of each declared foreign key among a source's tables."""
    stmt = select(JoinCandidate.from_table_id, JoinCandidate.to_table_id).where(
        JoinCandidate.source_id == source_id, JoinCandidate.kind == "declared"
    )
    return [(int(a), int(b)) for a, b in session.execute(stmt)]
