"""JSON-constrained replies for models without tool calls: the schema sent, parsing, replies outside the format."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.model_server import Call, FakeOpenAIServer, Raw, Say
from tests.workers.models.conftest import OPENAI_KEY, SEARCH_TABLES, TOOLS
from workers.models import json_replies
from workers.models.openai_provider import OpenAIProvider
from workers.models.types import Message, ModelError, ToolCallRequest, ToolResult, ToolSpec

QUESTION = Message("user", "How many orders shipped to Busan last month?")


@pytest.fixture
def provider(fake_openai: FakeOpenAIServer) -> Iterator[OpenAIProvider]:
    made = OpenAIProvider("small-model", api_key=OPENAI_KEY, base_url=fake_openai.url, tools_mode="json")
    yield made
    made.close()


def test_request_carries_the_reply_schema_and_no_tools(provider: OpenAIProvider, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Say("Hello.")])

    provider.complete("You answer business questions.", [QUESTION], TOOLS, timeout_s=10)

    raw = fake_openai.requests[0].raw
    assert "tools" not in raw
    response_format = raw["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "tablescout_reply"
    assert response_format["json_schema"]["strict"] is True
    options = response_format["json_schema"]["schema"]["anyOf"]
    assert [o["properties"]["tool"]["const"] for o in options[:-1]] == ["search_tables", "open_table_card"]
    assert options[0]["properties"]["arguments"] == SEARCH_TABLES.parameters
    assert options[0]["required"] == ["tool", "arguments"]
    assert options[-1] == {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    system = raw["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("You answer business questions.\n\n## How to reply")
    assert (
        "- search_tables(question, databases?, k?): Find the tables that hold the data a question needs."
        in (system["content"])
    )
    assert "Returns candidates" not in system["content"]  # only the first paragraph of a description
    assert "- open_table_card(database, table): Open the card of one table" in system["content"]


def test_tool_call_and_final_answer_are_parsed(provider: OpenAIProvider, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Call("search_tables", {"question": "orders", "k": 3}), Say("42 orders.")])

    first = provider.complete("system", [QUESTION], TOOLS, timeout_s=10)
    call = first.tool_calls[0]
    second = provider.complete(
        "system",
        [
            QUESTION,
            Message("assistant", tool_calls=first.tool_calls),
            Message("user", tool_results=(ToolResult(call.id, call.name, "ORD_MST"),)),
        ],
        TOOLS,
        timeout_s=10,
    )

    assert (first.text, first.stop_reason) == ("", "tool_use")
    assert (call.name, call.arguments) == ("search_tables", {"question": "orders", "k": 3})
    assert call.id.startswith("call_")
    assert (second.text, second.stop_reason, second.tool_calls) == ("42 orders.", "end", ())


def test_generated_call_ids_are_unique(provider: OpenAIProvider, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(lambda exchange: Call("search_tables", {"question": "orders"}))

    ids = {provider.complete("system", [QUESTION], TOOLS, timeout_s=10).tool_calls[0].id for _ in range(20)}

    assert len(ids) == 20


def test_fenced_json_is_accepted(provider: OpenAIProvider, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Raw('```json\n{"answer": "fine"}\n```')])

    assert provider.complete("system", [QUESTION], TOOLS, timeout_s=10).text == "fine"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("There were 42 orders.", "the model replied with invalid JSON: 'There were 42 orders.'"),
        ('["answer"]', "the model replied with JSON that is not an object"),
        ('{"result": 42}', 'neither a tool call nor {"answer": ...}'),
        ('{"tool": "drop_table", "arguments": {}}', "the model asked for tool 'drop_table', which is not offered"),
        ('{"tool": "search_tables", "arguments": "orders"}', "arguments that are not a JSON object"),
        ("", "invalid JSON: (empty reply)"),
    ],
)
def test_a_reply_outside_the_format_is_an_error(
    provider: OpenAIProvider, fake_openai: FakeOpenAIServer, content: str, message: str
) -> None:
    fake_openai.script([Raw(content)])

    with pytest.raises(ModelError, match="the model") as caught:
        provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert message in str(caught.value)


def test_a_reply_cut_by_the_token_limit_is_not_an_error(
    provider: OpenAIProvider, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.script([Say("a long answer that the token limit cuts", cut=True)])

    reply = provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert (reply.text, reply.stop_reason, reply.tool_calls) == ("", "max_tokens", ())


def test_tool_results_and_earlier_calls_are_written_as_text() -> None:
    calls = (ToolCallRequest("call_1", "search_tables", {"question": "orders"}),)
    results = (
        ToolResult("call_1", "search_tables", "ORD_MST"),
        ToolResult("call_2", "run_sql", "column QTY does not exist", is_error=True),
    )

    assert json.loads(json_replies.assistant_json("", calls)) == {
        "tool": "search_tables",
        "arguments": {"question": "orders"},
    }
    assert json.loads(json_replies.assistant_json("Hi", ())) == {"answer": "Hi"}
    assert json_replies.tool_results_text(results) == (
        "Result of search_tables:\nORD_MST\n\nResult of run_sql (error):\ncolumn QTY does not exist"
    )


def test_error_results_reach_the_model(provider: OpenAIProvider, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Call("search_tables", {"question": "orders"}), Call("search_tables", {"question": "orders"})])
    first = provider.complete("system", [QUESTION], TOOLS, timeout_s=10)
    call = first.tool_calls[0]
    failed = ToolResult(call.id, call.name, "search index is being rebuilt", is_error=True)

    provider.complete(
        "system",
        [QUESTION, Message("assistant", tool_calls=first.tool_calls), Message("user", tool_results=(failed,))],
        TOOLS,
        timeout_s=10,
    )

    seen = fake_openai.requests[1].exchange
    assert seen.tool_results == {"search_tables": "search index is being rebuilt"}
    assert seen.tool_errors == frozenset({"search_tables"})
    assert seen.json_mode


SQL_TOOL = ToolSpec("run_sql", "Run SQL.", {}, grammar='argument ::= "SELECT 1"', grammar_argument="sql")


@pytest.mark.parametrize(
    "reply",
    [
        Call("run_sql", {"sql": "SELECT 1"}),  # as llama.cpp answers: the prefill and its continuation
        Raw('SELECT 1"}}'),  # a server that returns the continuation alone
    ],
)
def test_a_call_that_is_the_only_reply_starts_from_its_prefill(fake_openai: FakeOpenAIServer, reply: Any) -> None:
    grammars = OpenAIProvider(
        "small-model", api_key=OPENAI_KEY, base_url=fake_openai.url, tools_mode="json", grammars=True, tools_first=True
    )
    fake_openai.script([reply])
    try:
        result = grammars.complete("Write SQL.", [QUESTION], [SQL_TOOL], timeout_s=10)
    finally:
        grammars.close()

    assert [(c.name, c.arguments) for c in result.tool_calls] == [("run_sql", {"sql": "SELECT 1"})]
    raw = fake_openai.requests[0].raw
    head = '{"tool": "run_sql", "arguments": {"sql": "'
    assert raw["messages"][-1] == {"role": "assistant", "content": head}
    assert raw["grammar"].split("\n")[0] == 'root ::= argument "\\"}}"'  # the grammar of what follows only
    assert json_replies.call_prefill([SQL_TOOL], answer=True) is None  # with an answer allowed, no prefill
    assert json_replies.call_prefill([SQL_TOOL, SEARCH_TABLES], answer=False) is None
