"""A table's figures as one reader's own SQL would count them (`core.access.viewer_facts`), for the cards and candidates
shown to a reader whose row filters or column masks make their rows differ from those analysis profiled.

Each figure is counted by a plain statement (`SELECT COUNT(*) ...`, `SELECT col, COUNT(*) ... GROUP BY col`) that goes
through the same guard, row-filter and mask rewrite and read-only executor as the reader's `run_sql`, so it counts
exactly the rows and values their queries read, on every engine and through views. These statements are tablescout's,
not the reader's: they are logged, not recorded among the turn's SQL. Each runs under a short timeout and the table
under a budget; what is not counted in time is left out of the card (`card_policies`). Counts are kept for a few
minutes per table, analysis and reader (their roles and directory attributes), so a turn's cards and searches do not
count a table twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session
from sqlglot import exp

from catalog.profiling import render_value
from core.access.mask_key import mask_key
from core.access.permissions import Principal
from core.access.viewer_facts import ColumnFacts, FactsDetail, TableFacts
from core.cards.card_policies import CODES_SHOWN, FREQUENT_SHOWN, column_masks, rows_differ
from core.cards.card_view import policies_of
from core.config.settings import Settings
from core.errors import TablescoutError
from core.store.models import SourceTable
from core.store.repositories import sources as source_repo
from workers.sql.engines import engine_for
from workers.sql.guard import SqlRefused, check_query, dialect_for
from workers.sql.limits import SqlLimits
from workers.sql.policy_refusals import PolicyRefused
from workers.sql.readonly import ExecutionError, ExecutionRefused, ExecutionTimeout, execute_read_only
from workers.sql.row_filters import apply_data_policies

log = logging.getLogger(__name__)

STATEMENT_TIMEOUT_S = 2.0
#: A table's counting stops starting statements after this long; what is left is not shown.
TABLE_BUDGET_S = 5.0
CACHE_SECONDS = 300.0
CACHE_ENTRIES = 1024
#: Values checked per statement by `values_present`.
VALUES_PER_CHECK = 50
_LIMITS = SqlLimits(max_rows=CODES_SHOWN, max_bytes=256_000, timeout_s=STATEMENT_TIMEOUT_S)


class _Unavailable(Exception):
    """The source or the statement cannot be used for this reader; nothing is counted."""


class _Cache:
    """Counted facts by (table, analysis, reader, detail), kept `CACHE_SECONDS`, at most `CACHE_ENTRIES`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[float, TableFacts]] = OrderedDict()

    def get(self, key: Hashable) -> TableFacts | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None or time.monotonic() - found[0] > CACHE_SECONDS:
                self._entries.pop(key, None)
                return None
            self._entries.move_to_end(key)
            return found[1]

    def put(self, key: Hashable, facts: TableFacts) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic(), facts)
            self._entries.move_to_end(key)
            while len(self._entries) > CACHE_ENTRIES:
                self._entries.popitem(last=False)


_cache = _Cache()


def _reader_key(principal: Principal) -> str:
    """What decides a reader's rows and masks: their roles' grants and their directory attributes."""
    return repr((principal.platform, principal.roles, sorted(principal.attributes.items())))


class SqlViewerReads:
    """`core.access.viewer_facts.ViewerReads` for one reader, over the store session and settings of the caller."""

    def __init__(self, session: Session, settings: Settings, principal: Principal) -> None:
        self.session = session
        self.settings = settings
        self.principal = principal

    # --- the ViewerReads protocol -------------------------------------------------------------------------------

    def table_facts(self, database: str, row: SourceTable, detail: FactsDetail) -> TableFacts | None:
        policies = policies_of(self.principal, database)
        card = row.card
        if policies is None or not card or not rows_differ(card, policies):
            return None
        key = (row.id, str(row.analysed_at), _reader_key(self.principal))
        for wanted in ("full", detail):
            cached = _cache.get((*key, wanted))
            if cached is not None:
                return cached
        try:
            counter = _Counter(self, database, row)
        except _Unavailable:
            return None
        masked = set(column_masks(card, policies))
        facts = counter.count(detail, [c for c in card.get("columns") or [] if str(c.get("name")) not in masked])
        _cache.put((*key, detail), facts)
        return facts

    def values_present(self, database: str, row: SourceTable, column: str, values: Sequence[str]) -> set[str]:
        try:
            counter = _Counter(self, database, row)
        except _Unavailable:
            return set()
        return counter.present(column, values)


class _Counter:
    """The statements that count one table for one reader."""

    def __init__(self, reads: SqlViewerReads, database: str, row: SourceTable) -> None:
        source = source_repo.by_name(reads.session, database)
        dialect = dialect_for(source.engine) if source is not None else None
        if source is None or dialect is None:
            raise _Unavailable
        try:
            self.engine: Engine = engine_for(reads.settings, source)
        except TablescoutError as exc:
            log.warning("counting %s for a reader: database %s cannot be used: %s", row.name, database, exc)
            raise _Unavailable from exc
        self.principal, self.database, self.dialect = reads.principal, source.name, dialect
        self.settings = reads.settings
        self.table = exp.Table(
            this=exp.to_identifier(row.name, quoted=True),
            db=exp.to_identifier(row.schema_name, quoted=True) if row.schema_name else None,
        )
        self.name = f"{row.schema_name}.{row.name}" if row.schema_name else row.name
        self.started = time.monotonic()

    def count(self, detail: FactsDetail, columns: Sequence[dict[str, Any]]) -> TableFacts:
        facts = TableFacts(rows=None, detail=detail)
        per_column: dict[str, ColumnFacts] = {}
        aggregates = self._aggregates(detail, columns)
        found = self._run(exp.select(*aggregates).from_(self.table.copy()))
        if found is None and len(aggregates) > 1:  # the per-column figures took too long: the row count alone
            found = self._run(exp.select(aggregates[0]).from_(self.table.copy()))
        if found is None:
            return facts
        values = list(found[0]) if found else []
        facts = replace(facts, rows=int(values[0]) if values and values[0] is not None else None)
        position = 1
        for column in columns:
            name = str(column.get("name"))
            wanted = _wanted(detail, column)
            figures: dict[str, Any] = {}
            for figure in wanted:
                if position >= len(values):
                    break
                figures[figure] = values[position]
                position += 1
            if figures:
                per_column[name] = ColumnFacts(
                    filled=_int(figures.get("filled")),
                    distinct=_int(figures.get("distinct")),
                    low=render_value(figures["low"]) if figures.get("low") is not None else None,
                    high=render_value(figures["high"]) if figures.get("high") is not None else None,
                )
        for column in columns:
            name = str(column.get("name"))
            limit = CODES_SHOWN if column.get("codes") else FREQUENT_SHOWN
            if not (column.get("codes") or (detail == "full" and column.get("frequent"))):
                continue
            frequent = self._frequent(name, limit, per_column.get(name, ColumnFacts()).filled)
            if frequent is None:
                continue
            per_column[name] = replace(per_column.get(name, ColumnFacts()), frequent=frequent)
        return replace(facts, columns=per_column)

    def present(self, column: str, values: Sequence[str]) -> set[str]:
        """The `values` some readable row holds in `column`, compared exactly (not by the engine's collation)."""
        found: set[str] = set()
        ref = _column(column)
        for start in range(0, len(values), VALUES_PER_CHECK):
            batch = list(dict.fromkeys(values[start : start + VALUES_PER_CHECK]))
            statement = (
                exp.select(ref.copy())
                .from_(self.table.copy())
                .where(exp.In(this=ref.copy(), expressions=[exp.Literal.string(v) for v in batch]))
                .group_by(ref.copy())
            )
            rows = self._run(statement)
            if rows is None:
                continue
            held = {render_value(r[0]).strip() for r in rows if r and r[0] is not None}
            found.update(v for v in batch if v in held)
        return found

    def _aggregates(self, detail: FactsDetail, columns: Sequence[dict[str, Any]]) -> list[exp.Expr]:
        items: list[exp.Expr] = [exp.Count(this=exp.Star())]
        for column in columns:
            ref = _column(str(column.get("name")))
            for figure in _wanted(detail, column):
                if figure == "filled":
                    items.append(exp.Count(this=ref.copy()))
                elif figure == "distinct":
                    items.append(exp.Count(this=exp.Distinct(expressions=[ref.copy()])))
                elif figure == "low":
                    items.append(exp.Min(this=ref.copy()))
                else:
                    items.append(exp.Max(this=ref.copy()))
        return items

    def _frequent(self, column: str, limit: int, filled: int | None) -> tuple[tuple[str, float], ...] | None:
        """The column's `limit` most frequent values with their share of the filled rows."""
        ref = _column(column)
        count = exp.Count(this=exp.Star())
        statement = (
            exp.select(ref.copy(), exp.alias_(count, "ts_n"))
            .from_(self.table.copy())
            .where(exp.Not(this=exp.Is(this=ref.copy(), expression=exp.Null())))
            .group_by(ref.copy())
            .order_by(exp.Ordered(this=exp.column("ts_n"), desc=True), exp.Ordered(this=ref.copy()))
            .limit(limit)
        )
        rows = self._run(statement)
        if rows is None:
            return None
        total = sum(int(r[1]) for r in rows) if len(rows) < limit else filled or self._filled(column)
        if not total:
            return ()
        return tuple((render_value(r[0]), round(int(r[1]) / total, 4)) for r in rows)

    def _filled(self, column: str) -> int | None:
        found = self._run(exp.select(exp.Count(this=_column(column))).from_(self.table.copy()))
        return _int(found[0][0]) if found else None

    def _run(self, statement: exp.Select) -> list[tuple[Any, ...]] | None:
        """The statement's rows as the reader's SQL would read them, or None (budget spent, refused, timed out)."""
        if time.monotonic() - self.started > TABLE_BUDGET_S:
            return None
        sql = statement.sql(dialect=self.dialect)
        try:
            checked = check_query(sql, self.dialect)
            policed = apply_data_policies(
                self.engine, self.principal, self.database, checked, mask_key=lambda: mask_key(self.settings)
            )
            if policed is None:
                return None  # nothing applies to this reader after all: the card's own figures stand
            fetched = execute_read_only(
                self.engine, policed.sql, _LIMITS, params=policed.params, mask_key=policed.mask_key
            )
        except ExecutionTimeout:
            log.info("counting %s.%s for a reader took longer than %g s", self.database, self.name, STATEMENT_TIMEOUT_S)
            return None
        except (SqlRefused, PolicyRefused, ExecutionRefused, ExecutionError) as exc:
            log.warning("counting %s.%s for a reader failed: %s", self.database, self.name, exc)
            return None
        return fetched.rows


def _wanted(detail: FactsDetail, column: dict[str, Any]) -> list[str]:
    """The aggregate figures a column's card shows, in the order `_aggregates` selects them."""
    if detail != "full":
        return []
    stats = column.get("stats")
    if not isinstance(stats, dict):
        return []
    wanted = ["filled"]
    if "distinct" in stats:
        wanted.append("distinct")
    if "min" in stats:
        wanted += ["low", "high"]
    return wanted


def _column(name: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name, quoted=True))


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
