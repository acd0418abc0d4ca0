"""The value index: distinct short text values of columns, and codes with their meanings, kept in step with the
cards, searched by full text (a code by its meaning)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select
from sqlalchemy.orm import Session

from core.store.models import SearchValue
from core.store.repositories.search_rows import Ids, any_id


@dataclass(frozen=True)
class ValueHit:
    source_id: int
    table_id: int
    column: str
    value: str
    score: float
    meaning: str | None = None  # what the code `value` means, the text that matched


#: (table id, column, value, meaning or None): one entry of the value index.
IndexedValue = tuple[int, str, str, str | None]


def sync_values(session: Session, source_id: int, wanted: set[IndexedValue]) -> tuple[int, int]:
    """Make the source's values exactly `wanted`; returns (added, removed)."""
    existing = {
        (row.table_id, row.column_name, row.value, row.meaning): row.id
        for row in session.execute(
            select(
                SearchValue.id, SearchValue.table_id, SearchValue.column_name, SearchValue.value, SearchValue.meaning
            ).where(SearchValue.source_id == source_id)
        )
    }
    stale = [value_id for key, value_id in existing.items() if key not in wanted]
    if stale:
        session.execute(delete(SearchValue).where(SearchValue.id.in_(stale)))
    new = [
        {"source_id": source_id, "table_id": t, "column_name": c, "value": v, "meaning": m, "tsv_text": m or v}
        for t, c, v, m in sorted(wanted - set(existing), key=lambda w: (w[0], w[1], w[2], w[3] or ""))
    ]
    # A SQL function cannot be a parameter of an executemany: the statement computes tsv from its own parameter.
    statement = insert(SearchValue).values(tsv=func.to_tsvector("simple", bindparam("tsv_text")))
    for start in range(0, len(new), 1000):
        session.execute(statement, new[start : start + 1000])
    return len(new), len(stale)


def value_statement(query: Any, source_ids: Ids, limit: Any) -> Any:
    """(source_id, table_id, column_name, value, meaning, rank, id) of the values matching any word of the to_tsquery
    expression `query`, best matches first (`search_batch.rankings` reads it with a search's other rankings, its
    values as bind parameters)."""
    tsquery = func.to_tsquery("simple", query)
    rank = func.ts_rank(SearchValue.tsv, tsquery)
    return (
        select(
            SearchValue.source_id,
            SearchValue.table_id,
            SearchValue.column_name,
            SearchValue.value,
            SearchValue.meaning,
            rank.label("rank"),
            SearchValue.id,
        )
        .where(SearchValue.source_id == any_id(source_ids), SearchValue.tsv.op("@@")(tsquery))
        .order_by(rank.desc(), SearchValue.id)
        .limit(limit)
    )


__all__ = ["IndexedValue", "ValueHit", "sync_values", "value_statement"]
