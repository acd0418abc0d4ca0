"""The local model's provider (TABLESCOUT_MODEL=local:<model>): JSON-constrained replies where the answer is offered
only once run_sql has run, a tool other than run_sql is not offered twice in a row, and no search once a card is open;
spoken to over HTTP by the real SDK against the fake OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import Call, FakeOpenAIServer, Say
from tests.support import isolated_settings
from workers.models import json_replies
from workers.models.openai_provider import OpenAIProvider
from workers.models.registry import LOCAL_BASE_URL, LOCAL_MAX_TOKENS, provider_from_settings
from workers.models.types import Message, ToolCallRequest, ToolResult, ToolSpec

QUESTION = Message("user", "Databases you can query:\n- erp (SQLite)\n\nQuestion:\nHow many orders in 2024?")


def spec(name: str) -> ToolSpec:
    return ToolSpec(name, f"{name} does its job.", {"type": "object", "properties": {"x": {"type": "string"}}})


SEARCH, CARD, SQL = spec("search_tables"), spec("open_table_card"), spec("run_sql")
TOOLS = (SEARCH, CARD, SQL)


def called(name: str, *, error: bool = False) -> list[Message]:
    call = ToolCallRequest(id=f"call_{name}", name=name, arguments={})
    result = ToolResult(call.id, name, "error: no such column" if error else "ok", is_error=error)
    return [Message("assistant", tool_calls=(call,)), Message("user", tool_results=(result,))]


def offered(raw: dict[str, Any]) -> list[str]:
    options = raw["response_format"]["json_schema"]["schema"]["anyOf"]
    return [o["properties"]["tool"]["const"] if "tool" in o["properties"] else "answer" for o in options]


@pytest.fixture(autouse=True)
def _no_vendor_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_the_answer_waits_for_run_sql_since_the_latest_question() -> None:
    assert not json_replies.may_answer([QUESTION], TOOLS)
    assert not json_replies.may_answer([QUESTION, *called("search_tables"), *called("open_table_card")], TOOLS)
    assert json_replies.may_answer([QUESTION, *called("search_tables"), *called("run_sql")], TOOLS)
    # a failed statement goes back to be fixed; after three failures (or "no permission") the answer says so
    failing = [QUESTION, *called("run_sql", error=True), *called("run_sql", error=True)]
    assert not json_replies.may_answer(failing, TOOLS)
    assert json_replies.may_answer([*failing, *called("run_sql", error=True)], TOOLS)
    denied = called("run_sql", error=True)
    denied[1] = Message("user", tool_results=(ToolResult("call_run_sql", "run_sql", "no permission: EMP_MST", True),))
    assert json_replies.may_answer([QUESTION, *denied], TOOLS)
    # run_sql in an earlier turn of the thread does not count for the new question
    history = [QUESTION, *called("run_sql"), Message("assistant", "42."), Message("user", "And in 2023?")]
    assert not json_replies.may_answer(history, TOOLS)
    # without run_sql among the tools (a note turn), any tool call opens the answer; with no tools, always
    assert json_replies.may_answer([QUESTION, *called("search_tables")], (SEARCH, CARD))
    assert not json_replies.may_answer([QUESTION], (SEARCH, CARD))
    assert json_replies.may_answer([QUESTION], ())


def test_a_tool_just_called_is_not_offered_next_except_run_sql() -> None:
    assert json_replies.next_tools([QUESTION], TOOLS) == [SEARCH, CARD]  # no SQL before a card is open
    assert json_replies.next_tools([QUESTION, *called("search_tables")], TOOLS) == [CARD]
    assert json_replies.next_tools([QUESTION, *called("open_table_card")], TOOLS) == [SQL]
    assert json_replies.next_tools([QUESTION, *called("open_table_card"), *called("run_sql", error=True)], TOOLS) == [
        CARD,
        SQL,
    ]
    # without a card tool (a user who may not open cards is offered none), run_sql is not held back
    assert json_replies.next_tools([QUESTION], (SEARCH, SQL)) == [SEARCH, SQL]
    assert json_replies.next_tools([QUESTION, *called("run_sql", error=True)], (SEARCH, SQL)) == [SEARCH, SQL]


def test_rows_from_run_sql_are_answered_next() -> None:
    assert json_replies.next_tools([QUESTION, *called("search_tables"), *called("run_sql")], TOOLS) == []
    schema = json_replies.reply_schema([], answer=True)
    assert [set(option["properties"]) for option in schema["anyOf"]] == [{"answer"}]


def test_once_a_card_is_open_the_next_step_is_not_another_search() -> None:
    join, listing, note = spec("find_join_path"), spec("list_tables"), spec("save_note")
    tools = (SEARCH, CARD, join, listing, SQL)
    assert json_replies.next_tools([QUESTION, *called("open_table_card")], tools) == [join, SQL]
    opened = [QUESTION, *called("search_tables"), *called("open_table_card"), *called("run_sql", error=True)]
    assert json_replies.next_tools(opened, tools) == [CARD, join, SQL]
    # before a card is open: no join path, and after one search a card or a table list, never a second search
    assert json_replies.next_tools([QUESTION], tools) == [SEARCH, CARD, listing]
    searched = [QUESTION, *called("search_tables")]
    assert json_replies.next_tools(searched, tools) == [CARD, listing]
    assert json_replies.next_tools([*searched, *called("list_tables")], tools) == [CARD]
    # once a card is open: one join path, at most three cards, then SQL
    carded = [QUESTION, *called("search_tables"), *called("open_table_card"), *called("find_join_path")]
    assert json_replies.next_tools(carded, tools) == [CARD, SQL]
    carded += [*called("open_table_card"), *called("open_table_card")]
    assert json_replies.next_tools(carded, tools) == [SQL]
    # a note turn: after the card, the note
    assert json_replies.next_tools([QUESTION, *called("open_table_card")], (SEARCH, CARD, listing, note)) == [note]
    # a call from an earlier question does not count for the new one
    earlier = [*called("open_table_card"), Message("assistant", "done"), QUESTION]
    assert json_replies.next_tools(earlier, TOOLS) == [SEARCH, CARD]


def test_local_provider_settings(tmp_path: Path) -> None:
    provider = provider_from_settings(isolated_settings(tmp_path, model="local:qwen2.5-coder-1.5b-instruct"))
    assert isinstance(provider, OpenAIProvider)
    assert provider.label == "local:qwen2.5-coder-1.5b-instruct"
    assert (provider.tools_mode, provider.tools_first, provider.max_tokens) == ("json", True, LOCAL_MAX_TOKENS)
    assert LOCAL_BASE_URL == "http://127.0.0.1:8181/v1"
    assert provider._base_url == LOCAL_BASE_URL
    provider.close()


def test_a_turn_with_the_local_provider_offers_the_answer_after_run_sql(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.script(
            [
                Call("search_tables", {"x": "orders"}),
                Call("open_table_card", {"x": "ORD_MST"}),
                Call("run_sql", {"x": "SELECT 1"}),
                Say("There were 42 orders."),
            ]
        )
        settings = isolated_settings(tmp_path, model="local:small", openai_base_url=server.url)
        provider = provider_from_settings(settings)
        assert isinstance(provider, OpenAIProvider)
        messages = [QUESTION]
        for _ in range(3):
            reply = provider.complete("Rules.", messages, TOOLS, timeout_s=10)
            call = reply.tool_calls[0]
            messages += [
                Message("assistant", tool_calls=reply.tool_calls),
                Message("user", tool_results=(ToolResult(call.id, call.name, "result"),)),
            ]
        final = provider.complete("Rules.", messages, TOOLS, timeout_s=10)
        provider.close()

    assert final.text == "There were 42 orders."
    requests = [r.raw for r in server.requests]
    assert offered(requests[0]) == ["search_tables", "open_table_card"]
    assert offered(requests[1]) == ["open_table_card"]
    assert offered(requests[2]) == ["run_sql"]
    assert offered(requests[3]) == ["answer"]  # run_sql returned rows: the reply is the answer
    assert all(r["max_tokens"] == LOCAL_MAX_TOKENS for r in requests)
    system = requests[0]["messages"][0]["content"]
    assert system.startswith("Rules.\n\n## How to reply")
    assert "Answer only from rows that run_sql returned" in system
    # the instructions do not change between rounds, so the server's prompt cache keeps the prefix
    assert {r["messages"][0]["content"] for r in requests} == {system}
