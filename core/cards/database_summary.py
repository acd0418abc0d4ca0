"""A database summary (under 600 characters): what business data the database holds, from its tables' roles, row
counts and foreign keys.

Analysis writes one for everyone (`catalog.summary`). A reader who may not see every table, row and column of a
database reads one written for them (`summary_for`): only the tables they may see, no row count of a table a row
filter applies to for them (nor a total over such tables), and foreign keys counted between tables they may see.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.cards.card_view import rows_differ_for
from core.store.models import Source
from core.store.repositories import catalog as catalog_repo
from core.text.naming import humanise

LIMIT = 600


@dataclass(frozen=True)
class SummaryTable:
    """What a summary says of one table."""

    name: str
    role: str
    copy: bool  # a copy of a live table (`copy_of`)
    rows: int | None  # None: unknown, or not the reader's to know
    referenced_by: int  # declared foreign keys from other tables to it


def summary_text(database: str, engine: str, tables: Sequence[SummaryTable]) -> str:
    copies = [t.name for t in tables if t.copy]
    partitions = [t.name for t in tables if t.role == "partition"]
    counted = [t for t in tables if not t.copy]
    rows = f", about {sum(t.rows or 0 for t in counted):,} rows" if all(t.rows is not None for t in counted) else ""
    main = sorted((t for t in tables if t.role == "live"), key=lambda t: (-t.referenced_by, -(t.rows or 0)))
    head = f"{database} ({engine}): {len(tables)} tables{rows}."
    tail = []
    if copies:
        tail.append(f" Stale copies: {', '.join(copies)}.")
    if partitions:
        tail.append(f" Partitions: {', '.join(partitions)}.")
    budget = LIMIT - len(head) - sum(len(t) for t in tail) - 12
    described: list[str] = []
    for table in main:
        count = f", {table.rows:,}" if table.rows is not None else ""
        item = f"{humanise(table.name)} ({table.name}{count})"
        if sum(len(d) + 2 for d in described) + len(item) > budget:
            break
        described.append(item)
    body = f" Holds {'; '.join(described)}." if described else ""
    text = head + body + "".join(tail)
    if len(text) > LIMIT:
        text = text[: LIMIT - 3].rstrip() + "..."
    return text


#: Summaries written for one reader are kept this long per source, analysis and reader: reading every table row of
#: a large source for each turn's first input would cost more than the turn's search.
KEPT_SECONDS = 600.0
KEPT_ENTRIES = 512
_kept: OrderedDict[tuple[object, ...], tuple[float, str]] = OrderedDict()
_kept_lock = threading.Lock()


def summary_for(session: Session, principal: Principal, source: Source) -> str | None:
    """The summary of `source` as `principal` may read it (module doc); None before the first analysis."""
    if source.summary is None or principal.sees_all_of(source.name):
        return source.summary
    key = (source.id, str(source.analysed_at), repr((principal.roles, sorted(principal.attributes.items()))))
    with _kept_lock:
        found = _kept.get(key)
        if found is not None and time.monotonic() - found[0] <= KEPT_SECONDS:
            return found[1]
    text = _written_for(session, principal, source)
    with _kept_lock:
        _kept[key] = (time.monotonic(), text)
        _kept.move_to_end(key)
        while len(_kept) > KEPT_ENTRIES:
            _kept.popitem(last=False)
    return text


def _written_for(session: Session, principal: Principal, source: Source) -> str:
    listed = catalog_repo.visible_tables_without_cards(session, source.id)
    shown = {t.id: t for t in listed if principal.may_see_table(source.name, t)}
    referenced: dict[int, int] = {}
    for referencing, target in catalog_repo.declared_references(session, source.id):
        if referencing in shown and target in shown and referencing != target:
            referenced[target] = referenced.get(target, 0) + 1
    tables = [
        SummaryTable(
            name=t.name,
            role=t.role,
            copy=t.copy_of_id is not None,
            rows=None if rows_differ_for(principal, source.name, t) else t.row_count,
            referenced_by=referenced.get(t.id, 0),
        )
        for t in sorted(shown.values(), key=lambda t: (t.schema_name, t.name))
    ]
    return summary_text(source.name, source.engine, tables)


def summaries_for(session: Session, principal: Principal, sources: Sequence[Source]) -> dict[str, str]:
    """The summary of each of `sources` that `principal` may query, as they may read it (analysed ones only)."""
    found: dict[str, str] = {}
    for source in sources:
        if principal.may_see(source.name):
            summary = summary_for(session, principal, source)
            if summary:
                found[source.name] = summary
    return found
