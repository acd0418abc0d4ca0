"""The guided path for small models (SPEC §4): from one search to one SQL statement, with bounded repair.

A small local model writes good SQL when it sees a small, familiar schema, and loses its way in a loop of tool
rounds. So for such a model (the `local:` provider, or any turn where TABLESCOUT_TURN_PATH=guided) a question turn
runs as a fixed sequence instead of the agentic loop:
1. **Selection** without model rounds: one search with every signal (nothing pinned unless the turn pins databases;
   the same permission filters and copy rule as everywhere), the candidates of the best database with the join
   tables connecting them, and at most one short constrained call in which the model picks among them (skipped when
   the candidates are few or the scores leave no doubt: `workers.turns.selection`).
2. **One SQL call** on the compact schema of just those tables (`workers.turns.compact_schema`); a join the
   statement does not use and the question does not ask for is taken out before it runs
   (`workers.turns.join_pruning`).
3. **Bounded repair**: on an error, one more call with the error and run_sql's hints; on an empty result, one
   re-search with the values the SQL filtered on as extra terms, and one more SQL call; then an honest answer.
4. When the best candidates of two databases tie on the same entity, the answer asks the user which one they mean,
   in business terms (the databases and what they hold), and runs no SQL.
5. The answer is written from the rows: the number in it is the number the SQL returned.
SQL runs through the run_sql tool and so through the permission-checked SQL service, and every round (one model
call), tool call and statement is stored as in the loop, so `ask --json` and the chat adapters see the same shapes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.config.settings import Settings
from core.store.repositories import turns as turn_repo
from search.service import SearchRequest, search_tables
from workers.models.types import Message, ModelProvider, ModelReply, ToolCallRequest, ToolResult, ToolSpec
from workers.sql.guard import dialect_for
from workers.tools.base import SqlRecord, ToolContext, queryable_source, viewer_reads
from workers.tools.sql_tool import SQL_TOOL
from workers.tools.toolbox import StepCallback, ToolRunner
from workers.turns import compact_schema
from workers.turns.guided_answers import (
    NO_PERMISSION,
    NOTHING_FOUND,
    GuidedAnswer,
    ambiguity_question,
    could_not,
    no_rows,
    rows_answer,
    sql_refused,
)
from workers.turns.guided_sql import filter_values, is_empty, shown_tables, sql_in_text, sql_prompt
from workers.turns.join_pruning import without_unneeded_joins
from workers.turns.rounds import add_round, count_reply
from workers.turns.selection import Selection, choose, pick_prompt, pick_spec, picked_tables, with_neighbours
from workers.turns.state import TurnEnvironment, TurnRun

log = logging.getLogger(__name__)

#: Candidates one search returns (across every database searched).
SEARCH_K = 10
#: Below this many seconds left, another model call is not started.
MIN_MODEL_S = 2.0
#: The sampling temperature of the first call of each step (choosing tables, writing SQL): the model's most likely
#: reply. A repair call (after an error, or after an empty result with the re-search's tables) keeps the service's
#: own sampling, so that it tries another statement, not the same again.
FIRST_TEMPERATURE = 0.0
#: A question of at most this many words that follows an earlier one in the thread ("and in 2023?") is searched
#: as one text with the earlier question, and the SQL call sees both.
FOLLOW_UP_WORDS = 8

#: One system prompt for both calls (choosing tables, writing SQL): a local server reads a prompt's shared beginning
#: from its cache, so only the reply format and the user message are new tokens in each call.
SYSTEM = """You help answer a business question from a company database, in one of two steps.
When asked to choose tables: choose the tables the query needs, as few as answer the question. They are listed most
relevant first. Prefer live tables: partitions, logs and copies hold part of the data or its history; choose one only
when the question asks about it.
When asked for SQL: write one SQL query that answers the question from the tables given.
- Use only the tables and columns shown, and as few tables as answer the question.
- When the query reads two or more tables, give each an alias and write every column with the alias of the table
  that has it. Join only on the REFERENCES shown.
- Select only what the question asks for; add DISTINCT or LIMIT only when the question asks for it
  ("which ... the most" is ORDER BY ... DESC LIMIT 1).
- Filter only on the conditions the question states: no extra conditions on status or flag columns.
- Count, sum and average in SQL.
- "Not ... any", "without" and "no ..." are NOT IN (SELECT ...) or EXCEPT, not a join with !=.
- Where a column lists codes, compare it with the code, not its meaning."""

SQL_SPEC = ToolSpec(
    name="run_sql",
    description="Run one read-only SELECT statement that answers the question.",
    parameters={"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
)


def uses_guided(settings: Settings, provider: ModelProvider, intent: str) -> bool:
    """Whether a turn of `intent` takes the guided path: question turns, for small models unless the setting says
    otherwise (TABLESCOUT_TURN_PATH: auto, guided or loop)."""
    if intent != "question" or settings.turn_path == "loop":
        return False
    return settings.turn_path == "guided" or provider.small_model


@dataclass
class _Guided:
    env: TurnEnvironment
    run: TurnRun
    progress: Callable[[str], None]
    step: StepCallback | None
    runner: ToolRunner = field(default_factory=lambda: ToolRunner([SQL_TOOL]))
    pending: list[tuple[str, dict[str, Any], str, float]] = field(default_factory=list)  # unrecorded tool calls
    model_calls: int = 0
    trace: dict[str, Any] = field(default_factory=dict)

    @property
    def context(self) -> ToolContext:
        return self.run.context


def answer_guided(
    env: TurnEnvironment, run: TurnRun, progress: Callable[[str], None], step: StepCallback | None
) -> tuple[GuidedAnswer, dict[str, Any]]:
    """Answer the turn's question on the guided path: the answer, and what the path did (for the turn's result)."""
    guided = _Guided(env, run, progress, step)
    answer = _answer(guided, _question(run))
    shown = {k: v for k, v in guided.trace.items() if k in ("tables", "databases", "repaired", "pruned")}
    return answer, {"step": answer.step, "model_calls": guided.model_calls} | shown


def _question(run: TurnRun) -> str:
    texts = run.context.user_texts
    return texts[-1] if texts else ""


def _earlier(guided: _Guided, question: str) -> str:
    """The asker's previous message in the thread when `question` reads as a follow-up to it; "" otherwise."""
    texts = guided.context.user_texts
    if len(texts) < 2 or len(question.split()) > FOLLOW_UP_WORDS:
        return ""
    return texts[-2]


def _answer(guided: _Guided, question: str) -> GuidedAnswer:
    guided.progress("Looking for tables…")
    earlier = _earlier(guided, question)
    guided.trace["earlier"] = earlier
    with guided.env.store.transaction() as session:
        guided.context.session = session
        selection = _search(guided, f"{earlier} {question}" if earlier else question, terms=[])
    if selection.ambiguous:
        guided.trace["databases"] = selection.ambiguous
        _record_search_only(guided)
        return GuidedAnswer("answered", ambiguity_question(selection.ambiguous), None, "ambiguity")
    if not selection.tables:
        _record_search_only(guided)
        if selection.denied:
            return GuidedAnswer("answered", NO_PERMISSION, None, "no_permission")
        return GuidedAnswer("answered", NOTHING_FOUND, None, "nothing_found")
    if selection.needs_pick:
        selection = _pick(guided, question, selection)
    guided.trace["tables"] = [f"{selection.database}.{t.qualified}" for t in selection.tables]
    record = _write_and_run(guided, question, selection, [])
    if record is not None and record.error is not None and not record.error.startswith("no permission"):
        guided.trace["repaired"] = "error"
        record = _write_and_run(guided, question, selection, _repair_messages(guided))
        if record is not None and record.error is not None:
            return could_not("sql_error", "the SQL failed twice", record)
    if record is None:
        return could_not("sql_error", "the model wrote no SQL", None)
    if record.error is not None:
        return GuidedAnswer("answered", sql_refused(record), None, "no_permission")
    if is_empty(record):
        guided.trace["repaired"] = "empty"
        with guided.env.store.transaction() as session:
            guided.context.session = session
            again = _search(guided, question, terms=filter_values(record.sql, selection.engine), prior=selection)
        if again.tables:
            guided.trace["tables"] = [f"{again.database}.{t.qualified}" for t in again.tables]
            hint = (
                f"An earlier query returned no rows:\n{record.sql}\n"
                "Check the tables, columns and values: use the values shown for the question's words."
            )
            retried = _write_and_run(guided, question, again, [], hint=hint)
            if retried is not None and retried.error is None:
                record = retried
        if is_empty(record):
            return GuidedAnswer("answered", no_rows(guided.context.tables_used, record), None, "empty")
    return GuidedAnswer("answered", rows_answer(question, record, guided.context.tables_used), None, "answer")


# --- selection ---------------------------------------------------------------------------------------------------


def _search(guided: _Guided, question: str, terms: list[str], prior: Selection | None = None) -> Selection:
    context = guided.context
    started = time.perf_counter()
    request = SearchRequest(question=question, databases=list(context.pins), terms=terms, k=SEARCH_K)
    result = search_tables(
        context.session, context.principal, request, context.encoders, context.viewer, viewer_reads(context)
    )
    selection = choose(context, question, result, prior)
    arguments: dict[str, Any] = {"question": question} | ({"terms": terms} if terms else {})
    if context.pins:
        arguments["databases"] = list(context.pins)
    text = _search_text(result.searched.describe(), result.candidates, result.denied_tables)
    guided.pending.append(("search_tables", arguments, text, (time.perf_counter() - started) * 1000))
    if selection.tables and not selection.needs_pick:
        _load_schema(guided, selection)
    return selection


def _search_text(searched: str, candidates: Sequence[Any], denied: Sequence[str]) -> str:
    lines = [searched]
    for rank, c in enumerate(candidates, start=1):
        extra = f" joins {' and '.join(c.through)}" if c.through else ""
        lines.append(f"{rank}. {c.database}.{c.table} [{c.role}] {c.score:.4f} {','.join(c.matched_by)}{extra}")
    if denied:
        lines.append("denied_tables: " + ", ".join(denied))
    return "\n".join(lines)


def _load_schema(guided: _Guided, selection: Selection) -> None:
    """The compact schema of the selection's tables (example rows read now, in the caller's transaction)."""
    context = guided.context
    source = queryable_source(context, selection.database)
    selection.schema = compact_schema.render(context, source, selection.tables)
    for table in selection.tables:
        context.opened.add((source.name, table.name.upper()))


def _pick(guided: _Guided, question: str, selection: Selection) -> Selection:
    spec = pick_spec(selection)
    prompt = [Message(role="user", text=pick_prompt(question, selection))]
    reply = _call(guided, SYSTEM, prompt, spec, FIRST_TEMPERATURE)
    with guided.env.store.transaction() as session:
        guided.context.session = session
        _record_round(guided, reply, None)
        chosen = picked_tables(selection, reply)
        source = queryable_source(guided.context, chosen.database)
        chosen.tables = with_neighbours(guided.context, source, chosen.tables)
        _load_schema(guided, chosen)
    return chosen


# --- SQL ---------------------------------------------------------------------------------------------------------


def _write_and_run(
    guided: _Guided, question: str, selection: Selection, repair: list[Message], hint: str = ""
) -> SqlRecord | None:
    """One SQL call (with the earlier call and its error when repairing) and the run of its statement."""
    guided.progress("Writing SQL…")
    earlier = str(guided.trace.get("earlier") or "")
    messages = repair or [Message(role="user", text=sql_prompt(question, selection, hint, earlier))]
    first = not repair and not hint  # a repair, after an error or an empty result, samples another statement
    reply = _call(guided, SYSTEM, messages, SQL_SPEC, FIRST_TEMPERATURE if first else None)
    sql = next((str(c.arguments.get("sql") or "") for c in reply.tool_calls if c.name == "run_sql"), "")
    if not sql.strip():
        sql = sql_in_text(reply.text)
    if sql.strip():
        pruned = without_unneeded_joins(
            sql, dialect_for(selection.engine), f"{earlier} {question}", shown_tables(selection)
        )
        if pruned != sql:
            guided.trace["pruned"] = sql
            sql = pruned
    call = ToolCallRequest(id=f"guided-{guided.model_calls}", name="run_sql", arguments={"sql": sql})
    guided.trace.setdefault("messages", {})["sql"] = messages
    guided.trace["last_call"] = call
    if not sql.strip():
        with guided.env.store.transaction() as session:
            guided.context.session = session
            _record_round(guided, reply, None)
        return None
    arguments = {"database": selection.database, "sql": sql}
    with guided.env.store.transaction() as session:
        guided.context.session = session
        result = _record_round(guided, reply, ToolCallRequest(id=call.id, name="run_sql", arguments=arguments))
    guided.trace["last_result"] = result
    return guided.context.sql_runs[-1] if guided.context.sql_runs else None


def _repair_messages(guided: _Guided) -> list[Message]:
    """The SQL call again, with the model's statement and the error run_sql answered (hints included)."""
    messages: list[Message] = guided.trace["messages"]["sql"]
    call: ToolCallRequest = guided.trace["last_call"]
    result: ToolResult | None = guided.trace.get("last_result")
    content = result.content if result is not None else "error: the statement did not run"
    fixed = ToolResult(call_id=call.id, name="run_sql", content=content + "\nWrite the corrected query.", is_error=True)
    return [*messages, Message(role="assistant", tool_calls=(call,)), Message(role="user", tool_results=(fixed,))]


# --- model calls and recording ---------------------------------------------------------------------------------


def _call(
    guided: _Guided, system: str, messages: list[Message], spec: ToolSpec, temperature: float | None
) -> ModelReply:
    run = guided.run
    remaining = run.deadline - time.monotonic()
    if remaining < MIN_MODEL_S:
        raise _OutOfTime()
    guided.trace.setdefault("started", []).append(turn_repo.now())
    reply = guided.env.provider.complete(system, messages, [spec], timeout_s=remaining, temperature=temperature)
    guided.model_calls += 1
    count_reply(run, reply)
    return reply


class _OutOfTime(Exception):
    """The turn's deadline leaves no time for another model call."""


def _record_round(guided: _Guided, reply: ModelReply, sql_call: ToolCallRequest | None) -> ToolResult | None:
    """The round of the latest model call, with the tool calls waiting to be recorded (a search) and the SQL it
    wrote, which runs now through run_sql."""
    env, run, context = guided.env, guided.run, guided.context
    session = context.session
    started = guided.trace["started"][-1] if guided.trace.get("started") else turn_repo.now()
    row = add_round(session, run, env.provider.label, started, reply, finished=False)
    session.flush()
    ordinal = _record_pending(guided, row.id)
    result = None
    if sql_call is not None:
        result = guided.runner.run(context, row.id, ordinal, sql_call, guided.progress, guided.step)
    row.finished_at = turn_repo.now()
    return result


def _record_pending(guided: _Guided, round_id: int) -> int:
    """Record the tool calls made without a model call (searches) under round `round_id`; the next ordinal."""
    session = guided.context.session
    ordinal = 1
    for tool, arguments, text, duration_ms in guided.pending:
        record = turn_repo.add_tool_call(session, round_id, ordinal, tool, arguments)
        record.result_text, record.result_chars, record.duration_ms = text, len(text), round(duration_ms, 2)
        ordinal += 1
    guided.pending.clear()
    return ordinal


def _record_search_only(guided: _Guided) -> None:
    """A turn that ends without a model call still shows its search: in a round of its own, with no model reply."""
    with guided.env.store.transaction() as session:
        guided.context.session = session
        _record_round(guided, ModelReply(text="", stop_reason="no_model_call"), None)


OutOfTime = _OutOfTime
