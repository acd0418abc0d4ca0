"""Plain-SQL reads of the metadata store for the operator's read-only commands (`source list`, `note list`, `card`),
over a psycopg connection (core.store.light_store), so that those commands load neither SQLAlchemy nor the ORM
models. Each read answers what its ORM counterpart in core.store.repositories answers, in the same order
(tests/store/test_light_reads.py holds them side by side); rows come back as the named types below.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg


@dataclass(frozen=True)
class SourceRow:
    """A registered source (the columns of core.store.models.Source that listing and cards use)."""

    id: int
    name: str
    aliases: tuple[str, ...]
    engine: str
    engine_version: str | None
    url_ref: str
    analysed_at: datetime | None
    write_capabilities: list[str] | None


@dataclass(frozen=True)
class TableRow:
    """An analysed table of a source, with its card."""

    id: int
    schema_name: str
    name: str
    visible: bool
    card: dict[str, Any] | None


@dataclass(frozen=True)
class NoteRow:
    """A live note as the operator sees it: every field `note list` shows (search.notes.NoteView's)."""

    id: int
    database: str
    tables: list[str]
    text: str
    author: str
    private: bool
    created_at: datetime
    edited_at: datetime | None

    def contract(self) -> dict[str, Any]:
        """The stable JSON form (`tablescout note list --json`), as search.notes.NoteView.contract."""
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


_SOURCE = "SELECT id, name, aliases, engine, engine_version, url_ref, analysed_at, write_capabilities FROM sources"


def _source(row: tuple[Any, ...]) -> SourceRow:
    ident, name, aliases, engine, version, url_ref, analysed_at, capabilities = row
    return SourceRow(ident, name, tuple(aliases or ()), engine, version, url_ref, analysed_at, capabilities)


def sources(conn: psycopg.Connection) -> list[SourceRow]:
    """Every registered source, by name (repositories.sources.all_sources)."""
    return [_source(row) for row in conn.execute(_SOURCE + " ORDER BY name")]


def source_by_name_or_alias(conn: psycopg.Connection, label: str) -> SourceRow | None:
    """The source named or aliased `label`, case-insensitively (repositories.sources.by_name_or_alias)."""
    wanted = label.lower()
    for source in map(_source, conn.execute(_SOURCE)):
        if source.name.lower() == wanted or any(a.lower() == wanted for a in source.aliases):
            return source
    return None


def table_counts(conn: psycopg.Connection) -> dict[int, int]:
    """Visible tables per source id (repositories.sources.table_counts)."""
    rows = conn.execute("SELECT source_id, count(*) FROM source_tables WHERE visible GROUP BY source_id")
    return {source_id: count for source_id, count in rows}


def find_table(conn: psycopg.Connection, source_id: int, name: str, schema: str | None = None) -> TableRow | None:
    """A table by name, exact first, then case-insensitive; schema '' means the default schema
    (repositories.catalog.find_table)."""
    sql = "SELECT id, schema_name, name, visible, card FROM source_tables WHERE source_id = %s AND lower(name) = %s"
    params: list[Any] = [source_id, name.lower()]
    if schema is not None:
        sql += " AND schema_name = %s"
        params.append(schema)
    candidates = [TableRow(*row) for row in conn.execute(sql, params)]
    exact = [t for t in candidates if t.name == name]
    if exact:
        return exact[0]
    return candidates[0] if len(candidates) == 1 else None


def table_names(conn: psycopg.Connection, source_id: int) -> list[str]:
    """The names of a source's tables (repositories.catalog.tables_of)."""
    return [name for (name,) in conn.execute("SELECT name FROM source_tables WHERE source_id = %s", [source_id])]


def shared_notes(conn: psycopg.Connection, table_id: int, *, limit: int = 5) -> list[NoteRow]:
    """Shared live notes attached to a table, newest first; `database` and `tables`
    are left empty: a card shows the notes of its own table."""
    rows = conn.execute(
        "SELECT n.id, n.text, n.author_platform, n.author_id, n.private, n.created_at, n.edited_at"
        " FROM notes n JOIN note_tables nt ON nt.note_id = n.id"
        " WHERE nt.table_id = %s AND n.deleted_at IS NULL AND n.private IS false"
        " ORDER BY n.created_at DESC, n.id DESC LIMIT %s",
        [table_id, limit],
    )
    return [NoteRow(i, "", [], text, f"{p}:{a}", private, c, e) for i, text, p, a, private, c, e in rows]


def live_notes(conn: psycopg.Connection) -> list[NoteRow]:
    """Every live note, shared or private, newest first, with the tables it is attached to ordered by database,
    schema and name (search.notes.list_notes for the operator, no database or table named)."""
    notes = conn.execute(
        "SELECT id, text, author_platform, author_id, private, created_at, edited_at FROM notes"
        " WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC"
    ).fetchall()
    attached: dict[int, list[tuple[str, str, str]]] = {}
    if notes:
        rows = conn.execute(
            "SELECT nt.note_id, s.name, t.schema_name, t.name FROM note_tables nt"
            " JOIN source_tables t ON t.id = nt.table_id JOIN sources s ON s.id = t.source_id"
            " WHERE nt.note_id = ANY(%s) ORDER BY nt.note_id, s.name, t.schema_name, t.name",
            [[n[0] for n in notes]],
        )
        for note_id, database, schema, table in rows:
            attached.setdefault(note_id, []).append((database, schema, table))
    found = []
    for ident, text, platform, author, private, created, edited in notes:
        tables = attached.get(ident, [])
        found.append(
            NoteRow(
                id=ident,
                database=tables[0][0] if tables else "",
                tables=[f"{schema}.{table}" if schema else table for _, schema, table in tables],
                text=text,
                author=f"{platform}:{author}",
                private=private,
                created_at=created,
                edited_at=edited,
            )
        )
    return found
