"""`run_sql`: read-only SQL on one source (SPEC §7), with the live-table rule on top.

The guard, the permission check, the read-only transaction and the caps live in `workers.sql`; this tool adds
what only a turn knows: which copies the user asked about, which tables the answer used, and the compact text the
model reads (rows, a truncation notice that says to count in SQL, or the error to fix).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.answer.model import json_cell
from core.answer.values import ValueKind
from core.store.models import ExecutedSql, Source
from core.store.repositories import catalog as catalog_repo
from workers.models.types import ToolSpec
from workers.sql.guard import SqlRefused, check_query, dialect_for
from workers.sql.limits import MAX_CELL_CHARS, SqlLimits
from workers.sql.repair import repair
from workers.sql.result_kinds import result_kinds
from workers.sql.service import SqlOutcome, run_sql
from workers.tools import sql_help
from workers.tools.base import SqlRecord, Tool, ToolContext, ToolOutput, queryable_source, shown_database, text_argument
from workers.tools.copy_rule import copy_refusal
from workers.tools.privacy import POLICIES_APPLIED, error_without_values, result_shape

#: Characters of result rows the model reads; the rows themselves (up to the row cap) are kept for the answer.
ROWS_TEXT_BUDGET = 5000
CELL_CHARS = 80

SQL_SPEC = ToolSpec(
    name="run_sql",
    description=(
        "Run one read-only SELECT on a database, in its engine's dialect. Returns columns and up to 200 rows, or "
        "the error to fix. Count and sum in SQL; do not count returned rows."
    ),
    parameters={
        "type": "object",
        "properties": {"database": {"type": "string"}, "sql": {"type": "string"}},
        "required": ["database", "sql"],
    },
)


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(json_cell(value))
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def result_text(outcome: SqlOutcome, limits: SqlLimits) -> str:
    if outcome.error is not None:
        return outcome.error  # already says what kind of problem it is: "refused:", "no permission:", "error:"...
    lines = [" | ".join(outcome.columns)]
    used = len(lines[0])
    shown = 0
    for row in outcome.rows:
        line = " | ".join(_cell(v) for v in row)
        if used + len(line) > ROWS_TEXT_BUDGET:
            break
        lines.append(line)
        used += len(line) + 1
        shown += 1
    if outcome.truncated:
        lines.append(
            f"(truncated: more than {limits.max_rows} rows; do not count or total rows here, "
            "use COUNT/SUM/GROUP BY in SQL)"
        )
    elif shown < len(outcome.rows):
        lines.append(f"({len(outcome.rows)} rows, {shown} shown; aggregate in SQL rather than reading rows)")
    else:
        lines.append(f"({len(outcome.rows)} row{'s' if len(outcome.rows) != 1 else ''})")
    if outcome.values_cut:
        cut = outcome.values_cut
        lines.append(f"({cut} long value{' was' if cut == 1 else 's were'} cut to {MAX_CELL_CHARS} characters)")
    return "\n".join(lines)


def shown_sql(sql: str, outcome: SqlOutcome) -> str:
    """The SQL as the user sees it under the answer: the model's, plus a line saying which row filters and column
    masks applied (hidden columns are not named: for this user they do not exist)."""
    if not outcome.policies:
        return sql
    return f"{sql.rstrip()}\n-- for you: {outcome.policies}"


def run(context: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    label = text_argument(arguments, "database")
    sql = text_argument(arguments, "sql")
    assert label is not None
    assert sql is not None
    source = queryable_source(context, label)
    limits = SqlLimits()
    dialect = dialect_for(source.engine)
    repaired = repair(sql, dialect, sql_help.qualifiers(context, source)) if dialect is not None else None
    asked = sql
    if repaired is not None:
        sql = repaired.sql
    repeated = sql_help.earlier_failure(context, source.name, [asked, sql])
    if repeated is not None:
        return ToolOutput(error_without_values(repeated, sql) if context.schema_only else repeated, is_error=True)
    names: list[tuple[str | None, str]] = []
    if dialect is not None:
        try:
            names = [(t.schema, t.name) for t in check_query(sql, dialect).tables]
        except SqlRefused:
            names = []  # run_sql refuses it below, with the same reason, and audits the refusal
    refusal = copy_refusal(context.session, context.principal, source, context.user_texts, names)
    if refusal is not None:
        context.sql_runs.append(SqlRecord(source.name, sql, [], [], False, refusal))
        context.session.add(
            ExecutedSql(
                turn_id=context.turn_id,
                tool_call_id=context.tool_call_id,
                source_id=source.id,
                user_platform=context.principal.platform,
                user_id=context.principal.user_id,
                sql=sql,
                status="refused",
                error=refusal,
            )
        )
        return ToolOutput(refusal, is_error=True)
    outcome = run_sql(
        context.session,
        context.settings,
        context.principal,
        source.name,
        sql,
        limits=limits,
        turn_id=context.turn_id,
        tool_call_id=context.tool_call_id,
    )
    kinds = _kinds(context, source, names, sql, dialect, outcome.columns) if outcome.status == "ok" else []
    text = result_text(outcome, limits)
    if outcome.status == "ok" and outcome.policies:
        text = f"{text}\n(applied for this user: {outcome.policies}; totals cover only what this user may see)"
    hint = ""
    if outcome.status == "error" and outcome.error is not None:
        hint = sql_help.error_hint(context, source, names, sql, outcome.error)
        text = f"{text}\n{hint}" if hint else text
    # What the model reads: the same, unless privacy mode keeps the values from it.
    told = _without_values(outcome, kinds, sql, hint) if context.schema_only else text
    context.sql_runs.append(
        SqlRecord(
            outcome.database,
            shown_sql(sql, outcome),
            list(outcome.columns),
            [list(r) for r in outcome.rows],
            outcome.truncated,
            None if outcome.status == "ok" else text,
            kinds,
        )
    )
    shown = f"Ran as: {sql}\n({'; '.join(repaired.changes)})\n{told}" if repaired is not None else told
    if outcome.status != "ok":
        return ToolOutput(shown, is_error=True)
    for schema, name in names:
        row = catalog_repo.find_table(context.session, source.id, name, schema)
        if row is not None:
            schema, name = row.schema_name or None, row.name
        qualified = f"{outcome.database}.{schema}.{name}" if schema else f"{outcome.database}.{name}"
        context.use(qualified, row.id if row is not None else None)
        if row is not None and row.copy_of_id is not None and qualified not in context.copies_used:
            context.copies_used.append(qualified)  # allowed only because the user asked about it: say so
    return ToolOutput(shown)


def _without_values(outcome: SqlOutcome, kinds: Sequence[ValueKind | None], sql: str, hint: str) -> str:
    """The result as the model reads it in privacy mode (`workers.tools.privacy`): the shape of the rows, or the
    error without the values an engine may quote, with its hint (names of tables and columns only)."""
    if outcome.status == "ok":
        text = result_shape(outcome.columns, kinds, outcome.rows, outcome.truncated)
        return f"{text}\n{POLICIES_APPLIED}" if outcome.policies else text
    error = error_without_values(outcome.error or "error: the statement did not run", sql)
    return f"{error}\n{hint}" if hint else error


def _kinds(
    context: ToolContext,
    source: Source,
    names: Sequence[tuple[str | None, str]],
    sql: str,
    dialect: str | None,
    columns: Sequence[str],
) -> list[ValueKind | None]:
    """What each result column holds, from the cards of the tables the statement reads (`result_kinds`)."""
    cards: dict[str, dict[str, Any]] = {}
    for schema, name in names:
        row = catalog_repo.find_table(context.session, source.id, name, schema)
        if row is not None and row.card:
            columns_of = [c for c in row.card.get("columns") or [] if isinstance(c, dict) and c.get("name")]
            cards[row.name.upper()] = {str(c["name"]).upper(): c for c in columns_of}
    return result_kinds(sql, dialect, columns, cards)


def _status(context: ToolContext, arguments: dict[str, Any]) -> str:
    database = shown_database(context, arguments)
    return f"Running SQL on {database}…" if database else "Running SQL…"


SQL_TOOL = Tool(SQL_SPEC, run, _status)
