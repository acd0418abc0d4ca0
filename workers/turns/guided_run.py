"""The state of one guided turn (`workers.turns.guided`) and what records it: each model call (within the turn's
deadline, its time and tokens kept for the turn's trace), and each round with the tool calls made in it, searches
made without a model call included, as the loop records them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.store.repositories import turns as turn_repo
from workers.models.types import Message, ModelReply, ToolCallRequest, ToolResult, ToolSpec
from workers.sql.guard import dialect_for
from workers.tools.base import ToolContext
from workers.tools.sql_tool import SQL_TOOL
from workers.tools.toolbox import StepCallback, ToolRunner
from workers.turns.column_qualifiers import elsewhere
from workers.turns.guided_sql import shown_names
from workers.turns.rounds import add_round, count_reply
from workers.turns.selection import Selection
from workers.turns.state import TurnEnvironment, TurnRun

#: Below this many seconds left, another model call is not started.
MIN_MODEL_S = 2.0


@dataclass
class GuidedTurn:
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


def timed(guided: GuidedTurn, part: str, started: float) -> None:
    spent = guided.trace.setdefault("ms", {})
    spent[part] = round(spent.get(part, 0.0) + (time.perf_counter() - started) * 1000, 1)


def call_model(
    guided: GuidedTurn, system: str, messages: list[Message], spec: ToolSpec, temperature: float | None
) -> ModelReply:
    run = guided.run
    remaining = run.deadline - time.monotonic()
    if remaining < MIN_MODEL_S:
        raise OutOfTime()
    guided.trace.setdefault("started", []).append(turn_repo.now())
    started = time.perf_counter()
    reply = guided.env.provider.complete(system, messages, [spec], timeout_s=remaining, temperature=temperature)
    timed(guided, "model", started)
    guided.trace.setdefault("tokens", []).append([reply.usage.input_tokens, reply.usage.output_tokens])
    guided.model_calls += 1
    count_reply(run, reply)
    return reply


class OutOfTime(Exception):
    """The turn's deadline leaves no time for another model call."""


def record_round(guided: GuidedTurn, reply: ModelReply, sql_call: ToolCallRequest | None) -> ToolResult | None:
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
        started_sql = time.perf_counter()
        result = guided.runner.run(context, row.id, ordinal, sql_call, guided.progress, guided.step)
        timed(guided, "sql", started_sql)
    row.finished_at = turn_repo.now()
    return result


def _record_pending(guided: GuidedTurn, round_id: int) -> int:
    """Record the tool calls made without a model call (searches) under round `round_id`; the next ordinal."""
    session = guided.context.session
    ordinal = 1
    for tool, arguments, text, duration_ms in guided.pending:
        record = turn_repo.add_tool_call(session, round_id, ordinal, tool, arguments)
        record.result_text, record.result_chars, record.duration_ms = text, len(text), round(duration_ms, 2)
        ordinal += 1
    guided.pending.clear()
    return ordinal


def record_search_only(guided: GuidedTurn) -> None:
    """A turn that ends without a model call still shows its search: in a round of its own, with no model reply."""
    with guided.env.store.transaction() as session:
        guided.context.session = session
        record_round(guided, ModelReply(text="", stop_reason="no_model_call"), None)


def repair_messages(guided: GuidedTurn, selection: Selection) -> list[Message]:
    """The SQL call again, with the model's statement and the error run_sql answered (hints included, and where
    a column it could not find is among the other shown tables)."""
    messages: list[Message] = guided.trace["messages"]["sql"]
    call: ToolCallRequest = guided.trace["last_call"]
    result: ToolResult | None = guided.trace.get("last_result")
    content = result.content if result is not None else "error: the statement did not run"
    if result is not None:
        sql = str(call.arguments.get("sql", ""))
        cards = {t.name.upper(): t.card for t in selection.tables}
        line = elsewhere(sql, dialect_for(selection.engine), content, shown_names(selection), cards)
        content += f"\n{line}" if line else ""
    fixed = ToolResult(call_id=call.id, name="run_sql", content=content + "\nWrite the corrected query.", is_error=True)
    return [*messages, Message(role="assistant", tool_calls=(call,)), Message(role="user", tool_results=(fixed,))]
