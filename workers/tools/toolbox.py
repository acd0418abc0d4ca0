"""Which tools a turn offers, and running one call: arguments checked, result budgeted, everything recorded.

Tools a user may not use are not offered: a user who may query no database gets no database tools, a question
turn gets no `save_note`, and a note turn gets no `run_sql`.

A model's reply enters the turn through `ToolRunner.screen`: text that no store or database accepts (a NUL
character, an unpaired surrogate) is cleaned out of its text and tool arguments, so the round can be recorded and
the conversation sent back to the model; a call whose arguments held such text is refused with a message that
says so (its SQL or search terms would not be what the model meant), and the model can send it again without.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from core.errors import TablescoutError
from core.store.database import connection_lost
from core.store.repositories import turns as turn_repo
from core.text.storable_text import storable, storable_value, unstorable_in
from workers.models.types import ModelReply, ToolCallRequest, ToolResult, ToolSpec
from workers.tools.base import RESULT_BUDGET, Tool, ToolContext, ToolInputError, ToolOutput
from workers.tools.card_tool import CARD_TOOL
from workers.tools.join_tool import JOIN_TOOL
from workers.tools.note_tool import NOTE_TOOL
from workers.tools.search_tool import LIST_TOOL, SEARCH_TOOL
from workers.tools.sql_tool import SQL_TOOL

log = logging.getLogger(__name__)

#: Told of each tool step: (step id, its status line, "in_progress" then "complete" or "error").
StepCallback = Callable[[str, str, str], None]


ALL_TOOLS = (SEARCH_TOOL, CARD_TOOL, JOIN_TOOL, LIST_TOOL, SQL_TOOL, NOTE_TOOL)


def status_line(tool: str, arguments: dict[str, Any]) -> str:
    """The status the console shows an operator while a worker runs `tool` (names as the model wrote them; the
    operator's terminal is not a channel)."""
    database, table = arguments.get("database") or "?", arguments.get("table") or "a table"
    lines = {
        "search_tables": "Searching tables…",
        "open_table_card": f"Reading {table}…",
        "find_join_path": "Finding how the tables join…",
        "list_tables": f"Listing tables of {database}…",
        "run_sql": f"Running SQL on {database}…",
        "save_note": f"Saving a note on {table}…",
    }
    return lines.get(tool, "Thinking…")


def tools_for(intent: str, context: ToolContext) -> list[Tool]:
    if not context.may_query:
        return []
    if intent == "note":
        return [SEARCH_TOOL, CARD_TOOL, LIST_TOOL, NOTE_TOOL]
    return [SEARCH_TOOL, CARD_TOOL, JOIN_TOOL, LIST_TOOL, SQL_TOOL]


def _budgeted(text: str) -> str:
    if len(text) <= RESULT_BUDGET:
        return text
    return text[: RESULT_BUDGET - 80].rstrip() + "\n… (result shortened; ask for fewer columns or rows)"


def _refusal(call: ToolCallRequest, problems: list[str]) -> str:
    held = " and ".join(problems)
    return (
        f"the arguments of {call.name} held {held}, which no database or store accepts; "
        "nothing was run. Send the call again without it."
    )


class ToolRunner:
    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = {t.spec.name: t for t in tools}
        self._refused: dict[str, str] = {}  # call id -> why the call is not run

    def screen(self, reply: ModelReply) -> ModelReply:
        """The reply with its text and tool arguments storable; calls whose arguments were not are refused by
        `run` (the message tells the model what was wrong)."""
        calls = []
        for call in reply.tool_calls:
            problems = unstorable_in(call.arguments) + unstorable_in(call.name) + unstorable_in(call.id)
            if problems:
                log.warning("tool call %s: arguments hold %s; refused", storable(call.name), ", ".join(problems))
                call = ToolCallRequest(
                    id=storable(call.id), name=storable(call.name), arguments=storable_value(call.arguments)
                )
                self._refused[call.id] = _refusal(call, problems)
            calls.append(call)
        return replace(reply, text=storable(reply.text), tool_calls=tuple(calls))

    @property
    def specs(self) -> list[ToolSpec]:
        return [t.spec for t in self.tools.values()]

    def run(
        self,
        context: ToolContext,
        round_id: int,
        ordinal: int,
        call: ToolCallRequest,
        progress: Callable[[str], None],
        step: StepCallback | None = None,
    ) -> ToolResult:
        """Run one call inside a savepoint, so a failing tool undoes only its own writes; record it either way.
        `step` hears the call start and end under its status line (a refused or unknown call is no step)."""
        session = context.session
        record = turn_repo.add_tool_call(session, round_id, ordinal, call.name, call.arguments)
        context.tool_call_id = record.id
        tool = self.tools.get(call.name)
        started = time.perf_counter()
        step_id, title = f"step-{round_id}-{ordinal}", ""
        try:
            refused = self._refused.pop(call.id, None)
            if refused is not None:
                raise ToolInputError(refused)
            if tool is None:
                offered = ", ".join(self.tools) or "none"
                raise ToolInputError(f"there is no tool {call.name!r} in this conversation; tools: {offered}")
            title = tool.status(context, call.arguments)
            progress(title)
            if step is not None:
                step(step_id, title, "in_progress")
            with session.begin_nested():
                output = tool.run(context, call.arguments)
        except ToolInputError as exc:
            output = ToolOutput(f"error: {exc}", is_error=True)
        except TablescoutError as exc:
            output = ToolOutput(f"error: {exc}", is_error=True)
        except Exception as exc:
            if connection_lost(exc):
                raise  # the metadata store went away under the turn: not the tool's failure, the turn's
            log.exception("tool %s failed on %s", call.name, json.dumps(call.arguments)[:500])
            output = ToolOutput(f"error: {call.name} failed unexpectedly; try another way", is_error=True)
        text = storable(_budgeted(output.text))  # database values may hold NUL characters
        record.result_text = text
        record.result_chars = len(text)
        record.error = text if output.is_error else None
        record.duration_ms = round((time.perf_counter() - started) * 1000, 2)
        if step is not None and title:
            step(step_id, title, "error" if output.is_error else "complete")
        return ToolResult(call_id=call.id, name=call.name, content=text, is_error=output.is_error)
