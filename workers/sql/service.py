"""`run_sql`: the model's SQL on one source database, through every layer of SPEC §7, with an audit row per call.

Order: the database must exist and be one the principal may query; the guard parses the SQL in the source's dialect;
every table it reads (through CTEs, subqueries and views) must be allowed; the user's row filters and column masks
are written into it (`workers.sql.row_filters`); the executor runs it read-only under a timeout and fetches a
bounded result. On SQLite, printf() and format() calls are wrapped so that a text past the length limit fails the
statement instead of reading as NULL. Whatever happens comes back as an `SqlOutcome` whose `error` tells the model
what to change; nothing here raises for bad SQL, denied tables, database errors or timeouts.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.access.mask_key import mask_key
from core.access.permissions import Principal
from core.config.settings import Settings
from core.errors import TablescoutError
from core.store.models import ExecutedSql, Source
from core.store.repositories import sources as source_repo
from workers.sql.access import AccessDenied, AccessRefused, check_access
from workers.sql.engines import engine_for
from workers.sql.guard import CheckedQuery, SqlRefused, check_query, dialect_for, is_system_table
from workers.sql.limits import SqlLimits
from workers.sql.policy_refusals import PolicyDenied, PolicyRefused
from workers.sql.readonly import ExecutionError, ExecutionRefused, ExecutionTimeout, execute_read_only
from workers.sql.row_filters import apply_data_policies
from workers.sql.sqlite_printf import checked_printf

log = logging.getLogger(__name__)

DEFAULT_LIMITS = SqlLimits()

SqlStatus = Literal["ok", "refused", "denied", "error", "timeout"]


@dataclass
class SqlOutcome:
    database: str  # the canonical source name (as asked, when no such source exists)
    sql: str
    status: SqlStatus
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)  # at most max_rows
    truncated: bool = False
    values_cut: int = 0  # values cut to MAX_CELL_CHARS before they reached the worker
    error: str | None = None  # for the model: what was wrong; never rows or names the user may not see
    duration_ms: float = 0.0
    sql_run: str | None = None  # the statement as rewritten for row filters and masks, when it was
    policies: str | None = None  # which row filters and masks applied, for the user and the audit


#: PEP 249's names for "the database, not the statement, failed" (every driver defines both; SQLAlchemy wraps them
#: under the same names): a connection refused, lost or timed out while connecting or reading the catalog.
_CONNECTION_ERRORS = ("OperationalError", "InterfaceError")


def _connection_failure(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if type(cause).__name__ in _CONNECTION_ERRORS:
            return True
        cause = cause.__cause__ or getattr(cause, "orig", None)
    return False


def _unreachable(name: str) -> str:
    """What the model (and the user, under the SQL) reads when a database cannot be reached: no host, no driver
    text (the log has both)."""
    return (
        f"error: cannot reach database {name} right now; tell the user that this database is not answering "
        "and to try again in a few minutes"
    )


class _Stop(Exception):
    def __init__(self, status: SqlStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def run_sql(
    session: Session,
    settings: Settings,
    principal: Principal,
    database: str,
    sql: str,
    *,
    limits: SqlLimits = DEFAULT_LIMITS,
    turn_id: int | None = None,
    tool_call_id: int | None = None,
) -> SqlOutcome:
    """Run `sql` read-only on `database` for `principal`; record it in `session` (the caller commits)."""
    started = time.monotonic()
    source = source_repo.by_name_or_alias(session, database)
    outcome = SqlOutcome(database=source.name if source is not None else database, sql=sql, status="ok")
    try:
        _run(session, settings, principal, source, database, sql, limits, outcome)
    except _Stop as stop:
        outcome.status, outcome.error = stop.status, str(stop)
    except Exception as exc:  # an unexpected failure still becomes an outcome for the model, and is logged
        if _connection_failure(exc):
            log.warning("run_sql: cannot reach database %s: %s", outcome.database, exc)
            outcome.status, outcome.error = "error", _unreachable(outcome.database)
        else:
            log.exception("run_sql failed on %s", outcome.database)
            outcome.status, outcome.error = "error", f"error: the query could not be run ({type(exc).__name__})"
    outcome.duration_ms = (time.monotonic() - started) * 1000
    session.add(
        ExecutedSql(
            turn_id=turn_id,
            tool_call_id=tool_call_id,
            source_id=source.id if source is not None else None,
            user_platform=principal.platform,
            user_id=principal.user_id,
            sql=sql,
            status=outcome.status,
            row_count=len(outcome.rows) if outcome.status == "ok" else None,
            truncated=outcome.truncated,
            duration_ms=outcome.duration_ms,
            error=outcome.error,
            sql_run=outcome.sql_run,
            policies=outcome.policies,
        )
    )
    session.flush()
    return outcome


def _run(
    session: Session,
    settings: Settings,
    principal: Principal,
    source: Source | None,
    asked: str,
    sql: str,
    limits: SqlLimits,
    outcome: SqlOutcome,
) -> None:
    if source is None:
        known = [s.name for s in source_repo.all_sources(session) if principal.may_see(s.name)]
        listed = ", ".join(known) if known else "none"
        raise _Stop("refused", f"refused: there is no database {asked!r}; databases you can query: {listed}")
    if not principal.may_see(source.name):
        raise _Stop("denied", f"no permission: you may not query database {source.name}")
    dialect = dialect_for(source.engine)
    if dialect is None:
        raise _Stop("refused", f"refused: run_sql does not support {source.engine} databases")
    try:
        catalog = principal.may_read_catalog(source.name)
        checked = check_query(sql, dialect, catalog=catalog)
    except SqlRefused as exc:
        raise _Stop("refused", str(exc)) from exc
    try:
        engine = engine_for(settings, source)
    except TablescoutError as exc:
        log.warning("run_sql: database %s cannot be used: %s", source.name, exc)
        raise _Stop("error", _unreachable(source.name)) from exc
    try:
        # With a catalog grant the system tables the query reads were allowed by the guard; everything else it
        # reads is checked as always.
        tables = [t for t in checked.tables if not (catalog and is_system_table(t, dialect))]
        check_access(engine, principal, source.name, tables)
    except AccessDenied as exc:
        raise _Stop("denied", str(exc)) from exc
    except AccessRefused as exc:
        raise _Stop("refused", str(exc)) from exc
    if catalog and principal.has_data_policies(source.name) and len(tables) < len(checked.tables):
        raise _Stop(
            "refused",
            "refused: system catalogs cannot be queried where row filters or column masks apply to you (their "
            "statistics hold column values); search the catalog with tools",
        )
    if dialect == "sqlite":
        wrapped = _printf_checked(checked)
        if wrapped is not checked:
            checked, sql = wrapped, wrapped.sql
            outcome.sql_run = sql
    try:
        policed = apply_data_policies(engine, principal, source.name, checked, mask_key=lambda: mask_key(settings))
    except PolicyDenied as exc:
        raise _Stop("denied", str(exc)) from exc
    except PolicyRefused as exc:
        raise _Stop("refused", str(exc)) from exc
    params = None
    if policed is not None:
        sql, params = policed.sql, policed.params
        outcome.sql_run, outcome.policies = policed.sql, policed.note() or None
    try:
        fetched = execute_read_only(
            engine, sql, limits, catalog=catalog, params=params, mask_key=policed.mask_key if policed else None
        )
    except ExecutionTimeout as exc:
        raise _Stop(
            "timeout",
            f"timeout: the query ran longer than {limits.timeout_s:g} s; narrow it or aggregate in SQL",
        ) from exc
    except ExecutionRefused as exc:
        raise _Stop("refused", str(exc)) from exc
    except ExecutionError as exc:
        if isinstance(exc.__cause__, SQLAlchemyError):  # only getting a connection goes through SQLAlchemy
            log.warning("run_sql: cannot reach database %s: %s", source.name, exc)
            raise _Stop("error", _unreachable(source.name)) from exc
        raise _Stop("error", f"error: {exc}") from exc
    outcome.columns, outcome.rows, outcome.truncated = fetched.columns, fetched.rows, fetched.truncated
    outcome.values_cut = fetched.cut_values


def _printf_checked(checked: CheckedQuery) -> CheckedQuery:
    """The query with SQLite's printf() and format() calls made to fail instead of giving NULL for a text too long
    (`workers.sql.sqlite_printf`); the query itself where it makes no such call."""
    wrapped = checked_printf(checked.statement)
    if wrapped is None:
        return checked
    return CheckedQuery(wrapped.sql(dialect=checked.dialect, comments=False), checked.dialect, wrapped, checked.tables)
