"""The JSON reply protocol for models that cannot emit tool calls (small local models behind llama.cpp, vLLM, Ollama).

The server constrains the model's output to `reply_schema(tools)`: either one tool call
`{"tool": "<name>", "arguments": {...}}` or the final answer `{"answer": "..."}`. The system prompt gains a compact
description of that format and of the tools (`reply_instructions`). Tool results go back as plain user text
(`tool_results_text`), and earlier replies are written back in the same JSON shape (`assistant_json`), so the model
always sees the format it must use.

A reply that does not fit the format (not JSON, neither shape, a tool that was not offered) can only come from a
server that ignored the schema; `parse_reply` raises ModelError naming the problem instead of guessing, because
retrying an unconstrained model does not make it constrained. Only a reply cut short by the token limit is not an
error: it comes back as an empty `max_tokens` reply, as with native tool use.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from workers.models.types import MODEL_UNREADABLE, Message, ModelError, ToolCallRequest, ToolResult, ToolSpec

SCHEMA_NAME = "tablescout_reply"
_DESCRIPTION_CHARS = 200
_QUOTED_REPLY_CHARS = 200


def reply_schema(tools: Sequence[ToolSpec], *, answer: bool = True) -> dict[str, Any]:
    """One object per tool (its name as a constant, its own argument schema) plus the final answer object; without
    `answer` (and with tools to call) the reply must be a tool call."""
    options: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"type": "string", "const": tool.name}, "arguments": tool.parameters},
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    if answer or not options:
        options.append(
            {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": options}


#: Text of a JSON string: any character but a double quote, a backslash or a control character, or an escape.
_JSON_TEXT = r'([^"\\\x00-\x1f] | "\\" ["\\/bfnrt])*'


def call_grammar(tools: Sequence[ToolSpec], *, answer: bool, prefilled: bool = False) -> str | None:
    """A GBNF grammar for a reply in this format that calls the one tool offered, its argument written under the
    tool's own grammar (or, with `answer`, gives the final answer); None unless exactly one tool with a grammar is
    offered. With `prefilled`, the grammar of what follows `call_prefill(tools)` only."""
    if len(tools) != 1 or not tools[0].grammar or not tools[0].grammar_argument:
        return None
    head, tail = _call_parts(tools[0])
    if prefilled:
        return "\n".join([f"root ::= argument {json.dumps(tail)}", str(tools[0].grammar)])
    root = f"root ::= {json.dumps(head)} argument {json.dumps(tail)}"
    if answer:
        opening, closing = json.dumps('{"answer": "'), json.dumps('"}')
        root += f" | {opening} answer-text {closing}"
    return "\n".join([root, str(tools[0].grammar), f"answer-text ::= {_JSON_TEXT}"])


def call_prefill(tools: Sequence[ToolSpec], *, answer: bool) -> str | None:
    """The start of the reply when it can only call the one tool offered with a grammar (`{"tool": "run_sql",
    "arguments": {"sql": "`): written into the prompt as the assistant's reply so far, it costs a server a prompt
    pass instead of a decoding step per token. None when the reply has a choice."""
    if answer or call_grammar(tools, answer=False) is None:
        return None
    return _call_parts(tools[0])[0]


def _call_parts(tool: ToolSpec) -> tuple[str, str]:
    call = json.dumps({"tool": tool.name, "arguments": {tool.grammar_argument: ""}})
    return call[: -len('"}}')], '"}}'


def reply_instructions(tools: Sequence[ToolSpec], *, tools_first: bool = False) -> str:
    """The part of the system prompt that explains the reply format and lists the tools."""
    lines = [
        "## How to reply",
        "Reply with exactly one JSON object and nothing else:",
        '- to call a tool: {"tool": "<tool name>", "arguments": {<the tool\'s arguments>}}',
        '- to answer the user: {"answer": "<your answer>"}',
        "Call one tool per reply; its result comes back in the next message.",
    ]
    if tools_first and tools:
        if any(tool.name == ANSWERING_TOOL for tool in tools):
            lines.append(
                f"Answer only from rows that {ANSWERING_TOOL} returned; never guess a number. If SQL fails, fix it."
            )
        else:
            lines.append("Call a tool before you answer; answer only from what the tools returned.")
    if tools:
        lines += ["", "## Tools"]
        lines += [f"- {_signature(tool)}: {_short_description(tool.description)}" for tool in tools]
    return "\n".join(lines)


def _signature(tool: ToolSpec) -> str:
    properties = tool.parameters.get("properties")
    names = list(properties) if isinstance(properties, dict) else []
    required = tool.parameters.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    return f"{tool.name}({', '.join(name if name in required_names else name + '?' for name in names)})"


def _short_description(description: str) -> str:
    first = description.strip().split("\n\n", 1)[0]
    first = " ".join(first.split())
    return first if len(first) <= _DESCRIPTION_CHARS else first[: _DESCRIPTION_CHARS - 1] + "…"


def assistant_json(text: str, calls: Sequence[ToolCallRequest]) -> str:
    """An earlier assistant message written as the model would have written it in this format."""
    if calls:
        return "\n".join(json.dumps({"tool": call.name, "arguments": call.arguments}) for call in calls)
    return json.dumps({"answer": text}, ensure_ascii=False)


def tool_results_text(results: Sequence[ToolResult]) -> str:
    """Tool results as user text: "Result of <tool>:" (or "Result of <tool> (error):") and the result."""
    parts = []
    for result in results:
        marker = " (error)" if result.is_error else ""
        parts.append(f"Result of {result.name}{marker}:\n{result.content}")
    return "\n\n".join(parts)


#: With tools-first replies, the tool whose call opens the answer when it is offered (a data question is answered
#: from SQL that ran, not from a search result); otherwise any tool call does.
ANSWERING_TOOL = "run_sql"


#: How many failed run_sql calls open the answer all the same (it then says what went wrong); each failure goes back
#: to the model with the error to fix first.
SQL_ATTEMPTS = 3
NO_PERMISSION = "no permission"
#: How run_sql's result starts when the model resent a statement that already failed in this turn (it is not run
#: again). With tools-first replies, run_sql is then not offered for the next reply and the answer is: a small model
#: that resends a failing statement once resends it until the round limit.
REPEATED_SQL = "error: this exact statement already failed"
#: With tools-first replies, the only tool offered again right after it was called: run_sql, whose error result asks
#: for a corrected statement. A small model with greedy sampling otherwise repeats the same search or card round after
#: round instead of reading the result it has.
REPEATABLE = frozenset({ANSWERING_TOOL})


#: With tools-first replies, run_sql is offered once a card has been opened for the message (the system prompt's rule:
#: open the card of every table the SQL uses first), and tools that find tables are no longer offered then: the next
#: step is SQL on the tables whose cards are open, a join path, another card, or the note, not another search.
FINDING = frozenset({"search_tables", "list_tables"})
CARD_TOOL = "open_table_card"
#: Before a card is open in a question turn: no join path (it is for tables whose cards are open) and one search
#: (after it, a card, or a table list when the search missed), so a small model cannot go round searching, listing
#: and asking for join paths without ever opening a card.
SEARCH_TOOL = "search_tables"
JOIN_TOOL = "find_join_path"
#: Once a card is open in a question turn: one join path, and at most this many cards (the rules: open the one to
#: three most promising); then SQL, so a small model cannot alternate between cards and join paths until the round
#: limit.
MAX_CARDS = 3


def next_tools(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    """The tools the next tools-first reply may call: none right after run_sql returned rows (the reply is the answer);
    otherwise all of them less the tool (other than run_sql) that the model's latest reply called, whose result it
    has already, less run_sql (and, in a question turn, the join path and a second search) until a card is open, and
    less the finding tools once one is (in a question turn also a second join path, and a fourth card)."""
    calls = _calls_since_message(messages)
    if calls and _sql_succeeded(messages):
        return []
    after = _after(calls, tools)
    if _sql_repeated(messages):
        after = [tool for tool in after if tool.name != ANSWERING_TOOL]
    return after


def _after(calls: Sequence[set[str]], tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    offered = {tool.name for tool in tools}
    card_open = any(CARD_TOOL in names for names in calls)
    dropped = (set(calls[-1]) - REPEATABLE) if calls else set()
    if card_open:
        dropped |= FINDING
        if ANSWERING_TOOL in offered:
            if any(JOIN_TOOL in names for names in calls):
                dropped.add(JOIN_TOOL)
            if sum(CARD_TOOL in names for names in calls) >= MAX_CARDS:
                dropped.add(CARD_TOOL)
    elif CARD_TOOL in offered:
        dropped.add(ANSWERING_TOOL)  # the rules: open the card of every table the SQL uses before writing SQL
        if ANSWERING_TOOL in offered:
            dropped.add(JOIN_TOOL)
            if any(SEARCH_TOOL in names for names in calls):
                dropped.add(SEARCH_TOOL)
    return [tool for tool in tools if tool.name not in dropped] or list(tools)


def _calls_since_message(messages: Sequence[Message]) -> list[set[str]]:
    """The names of the tools each assistant reply called since the user's latest message, oldest first."""
    calls: list[set[str]] = []
    for message in reversed(messages):
        if message.role == "user" and message.text.strip() and not message.tool_results:
            break
        if message.role == "assistant" and message.tool_calls:
            calls.append({call.name for call in message.tool_calls})
    return calls[::-1]


def _sql_succeeded(messages: Sequence[Message]) -> bool:
    """Whether the latest message holds a run_sql result that is not an error."""
    latest = messages[-1] if messages else None
    if latest is None or latest.role != "user":
        return False
    return any(r.name == ANSWERING_TOOL and not r.is_error for r in latest.tool_results)


def _sql_repeated(messages: Sequence[Message]) -> bool:
    """Whether the latest message holds a run_sql result refusing a statement that already failed."""
    latest = messages[-1] if messages else None
    if latest is None or latest.role != "user":
        return False
    return any(r.name == ANSWERING_TOOL and r.content.startswith(REPEATED_SQL) for r in latest.tool_results)


def may_answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bool:
    """Whether a tools-first reply may be the answer. With run_sql offered: once, since the user's latest message
    (text, not tool results), run_sql has returned rows, or said the user has no permission, or failed
    SQL_ATTEMPTS times (then the answer says what went wrong). Without run_sql: once any tool has been called. With
    no tools: always."""
    offered = {tool.name for tool in tools}
    if not offered:
        return True
    results = _results_since_message(messages)
    if ANSWERING_TOOL not in offered:
        return bool(results)
    sql = [r for r in results if r.name == ANSWERING_TOOL]
    if any(not r.is_error or r.content.startswith((NO_PERMISSION, REPEATED_SQL)) for r in sql):
        return True
    return len(sql) >= SQL_ATTEMPTS


def _results_since_message(messages: Sequence[Message]) -> list[ToolResult]:
    results: list[ToolResult] = []
    for message in reversed(messages):
        if message.role == "user" and message.text.strip() and not message.tool_results:
            break
        results[:0] = message.tool_results
    return results


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def parse_reply(content: str | None, tools: Sequence[ToolSpec]) -> tuple[str, tuple[ToolCallRequest, ...]]:
    """(final text, ()) or ("", (one tool call,)) from a reply in this format; ModelError when it does not fit."""
    raw = _strip_fence((content or "").strip())
    try:
        data = json.loads(raw)
    except ValueError:
        raise ModelError(f"the model replied with invalid JSON: {_quote(raw)}", user_message=MODEL_UNREADABLE) from None
    if not isinstance(data, dict):
        raise ModelError(
            f"the model replied with JSON that is not an object: {_quote(raw)}", user_message=MODEL_UNREADABLE
        )
    if "tool" in data:
        name = data["tool"]
        offered = {tool.name for tool in tools}
        if not isinstance(name, str) or name not in offered:
            listed = ", ".join(sorted(offered)) or "none"
            raise ModelError(
                f"the model asked for tool {name!r}, which is not offered (offered: {listed})",
                user_message=MODEL_UNREADABLE,
            )
        arguments = data.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ModelError(
                f"the model called {name} with arguments that are not a JSON object: {_quote(raw)}",
                user_message=MODEL_UNREADABLE,
            )
        return "", (ToolCallRequest(id=new_call_id(), name=name, arguments=arguments),)
    if isinstance(data.get("answer"), str):
        return data["answer"], ()
    raise ModelError(
        f'the model replied with JSON that is neither a tool call nor {{"answer": ...}}: {_quote(raw)}',
        user_message=MODEL_UNREADABLE,
    )


def _strip_fence(text: str) -> str:
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        inner = text[3:-3]
        first_line, _, rest = inner.partition("\n")
        return (rest if first_line.strip().isalpha() or not first_line.strip() else inner).strip()
    return text


def _quote(text: str) -> str:
    shown = " ".join(text.split())
    if not shown:
        return "(empty reply)"
    return repr(shown if len(shown) <= _QUOTED_REPLY_CHARS else shown[: _QUOTED_REPLY_CHARS - 1] + "…")
