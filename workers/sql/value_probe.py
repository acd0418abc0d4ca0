"""Which of some values a column holds, and a sample of the values it holds: the checks of a filter's literals
before an answer goes out (`workers.turns.answer_checks`).

Each probe is one small read through the permission-checked service (`workers.sql.service.run_sql`), so row
filters, column masks and the audit apply as to any SQL of the user's; a probe that fails or is refused answers
None (nothing is known), never an error.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session
from sqlglot import exp

from core.access.permissions import Principal
from core.config.settings import Settings
from workers.sql.guard import dialect_for
from workers.sql.limits import SqlLimits
from workers.sql.service import run_sql

#: Distinct values read when looking for the one a literal means.
SAMPLE_VALUES = 300
_LIMITS = SqlLimits(max_rows=SAMPLE_VALUES, timeout_s=5.0)


def _target(engine: str, table: str, schema: str | None, column: str) -> tuple[exp.Column, exp.Table, str | None]:
    dialect = dialect_for(engine)
    return (
        exp.column(column, quoted=True),
        exp.table_(table, db=schema, quoted=True),
        dialect,
    )


def held_values(
    session: Session,
    settings: Settings,
    principal: Principal,
    *,
    database: str,
    engine: str,
    table: str,
    schema: str | None,
    column: str,
    literals: Sequence[str],
    turn_id: int | None = None,
) -> set[str] | None:
    """The `literals` that `column` of `table` holds (compared exactly, as the model's filter compares them)."""
    if not literals:
        return set()
    target_column, target, dialect = _target(engine, table, schema, column)
    values = [exp.Literal.string(v) for v in literals]
    query = exp.select(target_column).distinct().from_(target).where(exp.In(this=target_column, expressions=values))
    outcome = run_sql(
        session, settings, principal, database, query.sql(dialect=dialect), limits=_LIMITS, turn_id=turn_id
    )
    if outcome.status != "ok":
        return None
    return {str(row[0]) for row in outcome.rows if row and row[0] is not None}


def sample_values(
    session: Session,
    settings: Settings,
    principal: Principal,
    *,
    database: str,
    engine: str,
    table: str,
    schema: str | None,
    column: str,
    turn_id: int | None = None,
) -> list[str] | None:
    """Up to `SAMPLE_VALUES` distinct text values of `column` (the most frequent first)."""
    target_column, target, dialect = _target(engine, table, schema, column)
    count = exp.Count(this=exp.Star())
    query = (
        exp.select(target_column)
        .from_(target)
        .where(exp.Not(this=exp.Is(this=target_column, expression=exp.Null())))
        .group_by(target_column)
        .order_by(exp.Ordered(this=count, desc=True))
        .limit(SAMPLE_VALUES)
    )
    outcome = run_sql(
        session, settings, principal, database, query.sql(dialect=dialect), limits=_LIMITS, turn_id=turn_id
    )
    if outcome.status != "ok":
        return None
    return [str(row[0]) for row in outcome.rows if row and row[0] is not None]
