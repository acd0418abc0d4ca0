"""The join graph around a set of tables: declared keys and confident inferred joins that touch them."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import func, literal_column, or_, select, union_all
from sqlalchemy.orm import Session

from core.store.models import JoinCandidate


def edges_touching(session: Session, table_ids: Collection[int], min_confidence: float) -> list[JoinCandidate]:
    """Joins with one end among `table_ids`: every declared key, inferred ones from `min_confidence` up."""
    if not table_ids:
        return []
    ids = list(table_ids)
    statement = select(JoinCandidate).where(
        or_(JoinCandidate.from_table_id.in_(ids), JoinCandidate.to_table_id.in_(ids)),
        or_(JoinCandidate.kind == "declared", JoinCandidate.confidence >= min_confidence),
    )
    return list(session.scalars(statement))


def degrees(session: Session, table_ids: Collection[int]) -> dict[int, int]:
    """How many joins touch each of `table_ids` (declared or inferred, any confidence)."""
    if not table_ids:
        return {}
    ids = list(table_ids)
    ends = union_all(
        select(JoinCandidate.from_table_id.label("table_id")).where(JoinCandidate.from_table_id.in_(ids)),
        select(JoinCandidate.to_table_id.label("table_id")).where(JoinCandidate.to_table_id.in_(ids)),
    ).subquery()
    rows = session.execute(select(ends.c.table_id, func.count(literal_column("*"))).group_by(ends.c.table_id))
    return {int(table_id): int(count) for table_id, count in rows}
