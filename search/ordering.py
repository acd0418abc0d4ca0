"""Copies directly behind their live table, whatever the scores say; a copy is moved, never dropped."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from core.store.models import SourceTable
from core.store.repositories import search_queries as queries

COPY_ROLES = frozenset({"backup", "draft", "staging", "snapshot"})


def is_copy(row: SourceTable) -> bool:
    return row.role in COPY_ROLES and row.copy_of_id is not None


def _live_of(row: SourceTable) -> int | None:
    return row.copy_of_id if row.role in COPY_ROLES else None


def place_copies(
    session: Session, order: list[int], rows: dict[int, SourceTable], may_see: Callable[[SourceTable], bool]
) -> list[int]:
    """Reorder so each live table comes first and its copies right after it.

    A copy that ranked above its live table brings the live table up to its place (fetched when search did not
    retrieve it, provided it is visible and allowed).
    """
    copies: dict[int, list[int]] = {}
    for table_id in order:
        live = _live_of(rows[table_id])
        if live is not None:
            copies.setdefault(live, []).append(table_id)
    missing = [live for live in copies if live not in rows]
    for live_id, row in queries.tables(session, missing).items():
        if row.visible and may_see(row):
            rows[live_id] = row
    result: list[int] = []
    emitted: set[int] = set()

    def emit(table_id: int) -> None:
        if table_id in emitted:
            return
        emitted.add(table_id)
        result.append(table_id)
        for copy in copies.get(table_id, []):
            if copy not in emitted:
                emitted.add(copy)
                result.append(copy)

    for table_id in order:
        live = _live_of(rows[table_id])
        if live is not None and live in rows and live not in emitted:
            emit(live)
        emit(table_id)
    return result


def take_slots(order: list[int], rows: dict[int, SourceTable], k: int) -> list[int]:
    """The first `k` tables, each followed by the copies placed behind it.

    A copy directly behind its live table rides in that table's slot: copies are variants of a table already
    offered, and letting them take slots would push other relevant live tables out of the first k.
    """
    taken: list[int] = []
    slots = 0
    for table_id in order:
        live = _live_of(rows[table_id])
        riding = live is not None and live in taken
        if not riding:
            if slots == k:
                break
            slots += 1
        taken.append(table_id)
    return taken
