"""Conversations through the real SDKs against the fake servers: text, tool calls and their results, usage."""

from __future__ import annotations

import json

from tests.fakes.model_server import Call, Calls, FakeAnthropicServer, Say
from tests.workers.models.conftest import TOOLS, Kit, make_provider
from workers.models.types import Message, ToolResult

QUESTION = Message("user", "How many orders shipped to Busan last month?")


def test_text_reply(kit: Kit) -> None:
    kit.server.script([Say("42 orders shipped to Busan.")])

    reply = kit.provider.complete("You answer business questions.", [QUESTION], TOOLS, timeout_s=10)

    assert reply.text == "42 orders shipped to Busan."
    assert reply.tool_calls == ()
    assert reply.stop_reason == "end"
    assert reply.model in ("claude-test", "local-model")
    seen = kit.server.requests[0].exchange
    assert seen.user_text == QUESTION.text
    assert seen.system.startswith("You answer business questions.")
    assert seen.tools == ("search_tables", "open_table_card")


def test_label_names_provider_and_model(kit: Kit) -> None:
    expected = "anthropic:claude-test" if kit.kind == "anthropic" else "openai:local-model"
    assert kit.provider.label == expected


def test_tool_call_round_trip(kit: Kit) -> None:
    kit.server.script([Call("search_tables", {"question": "orders shipped to Busan"}), Say("42 orders.")])

    first = kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert first.stop_reason == "tool_use"
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("search_tables", {"question": "orders shipped to Busan"})
    ]
    call = first.tool_calls[0]
    history = [
        QUESTION,
        Message("assistant", first.text, tool_calls=first.tool_calls),
        Message("user", tool_results=(ToolResult(call.id, call.name, "ORD_MST (live), ORD_MST_BAK (copy)"),)),
    ]

    second = kit.provider.complete("system", history, TOOLS, timeout_s=10)

    assert second.text == "42 orders."
    assert second.stop_reason == "end"
    seen = kit.server.requests[1].exchange
    assert seen.tool_results == {"search_tables": "ORD_MST (live), ORD_MST_BAK (copy)"}
    assert seen.tool_errors == frozenset()
    assert seen.user_text == QUESTION.text
    assert seen.round == 2
    raw = kit.server.requests[1].raw
    if kit.kind == "anthropic":
        assistant, results = raw["messages"][1], raw["messages"][2]
        assert assistant["content"][-1] == {
            "type": "tool_use",
            "id": call.id,
            "name": "search_tables",
            "input": {"question": "orders shipped to Busan"},
        }
        assert results["content"][0]["tool_use_id"] == call.id
        assert "is_error" not in results["content"][0]
    elif kit.kind == "openai-native":
        assistant, result = raw["messages"][2], raw["messages"][3]
        assert assistant["tool_calls"][0]["id"] == call.id
        assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {
            "question": "orders shipped to Busan"
        }
        assert result == {"role": "tool", "tool_call_id": call.id, "content": "ORD_MST (live), ORD_MST_BAK (copy)"}
    else:
        assistant, result = raw["messages"][2], raw["messages"][3]
        assert json.loads(assistant["content"]) == {
            "tool": "search_tables",
            "arguments": {"question": "orders shipped to Busan"},
        }
        assert result == {"role": "user", "content": "Result of search_tables:\nORD_MST (live), ORD_MST_BAK (copy)"}


def test_error_result_is_marked(kit: Kit) -> None:
    kit.server.script([Call("open_table_card", {"database": "erp", "table": "ORD"}), Say("Sorry.")])
    first = kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)
    call = first.tool_calls[0]
    failed = ToolResult(call.id, call.name, "no table ORD in erp", is_error=True)

    kit.provider.complete(
        "system",
        [QUESTION, Message("assistant", tool_calls=first.tool_calls), Message("user", tool_results=(failed,))],
        TOOLS,
        timeout_s=10,
    )

    seen = kit.server.requests[1].exchange
    assert seen.tool_results == {"open_table_card": "no table ORD in erp"}
    assert seen.tool_errors == frozenset({"open_table_card"})
    if kit.kind == "anthropic":
        block = kit.server.requests[1].raw["messages"][2]["content"][0]
        assert block == {
            "type": "tool_result",
            "tool_use_id": call.id,
            "content": "no table ORD in erp",
            "is_error": True,
        }


def test_several_tool_calls_in_one_reply(native_kit: Kit) -> None:
    native_kit.server.script(
        [
            Calls(
                [
                    ("open_table_card", {"database": "erp", "table": "ORD_MST"}),
                    ("open_table_card", {"database": "erp", "table": "CUST"}),
                ],
                text="Let me look at both tables.",
            ),
            Say("Done."),
        ]
    )

    reply = native_kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert reply.stop_reason == "tool_use"
    assert reply.text == "Let me look at both tables."
    assert [c.arguments["table"] for c in reply.tool_calls] == ["ORD_MST", "CUST"]
    assert len({c.id for c in reply.tool_calls}) == 2
    results = tuple(ToolResult(c.id, c.name, f"card of {c.arguments['table']}") for c in reply.tool_calls)
    native_kit.provider.complete(
        "system",
        [
            QUESTION,
            Message("assistant", reply.text, tool_calls=reply.tool_calls),
            Message("user", tool_results=results),
        ],
        TOOLS,
        timeout_s=10,
    )
    raw = native_kit.server.requests[1].raw["messages"]
    if native_kit.kind == "anthropic":
        paired = [block["tool_use_id"] for block in raw[2]["content"]]
    else:
        paired = [message["tool_call_id"] for message in raw[3:5]]
    assert paired == [c.id for c in reply.tool_calls]


def test_usage_is_recorded(kit: Kit) -> None:
    kit.server.script([Say("Hello.")])

    reply = kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    usage = kit.server.requests[0].answer["usage"]
    if kit.kind == "anthropic":
        total_input = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
        assert (reply.usage.input_tokens, reply.usage.output_tokens) == (total_input, usage["output_tokens"])
    else:
        assert (reply.usage.input_tokens, reply.usage.output_tokens) == (
            usage["prompt_tokens"],
            usage["completion_tokens"],
        )
    assert reply.usage.input_tokens > 0
    assert reply.usage.output_tokens > 0


def test_reply_cut_by_token_limit(kit: Kit) -> None:
    kit.server.script([Say("The answer is", cut=True)])

    reply = kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert reply.stop_reason == "max_tokens"
    assert reply.tool_calls == ()


def test_max_tokens_is_sent(kit: Kit) -> None:
    kit.server.script([Say("ok")])
    kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)
    assert kit.server.requests[0].raw["max_tokens"] == 2048


def test_no_tools_offered(kit: Kit) -> None:
    kit.server.script([Say("Hello.")])

    reply = kit.provider.complete("system", [Message("user", "hi")], (), timeout_s=10)

    assert reply.text == "Hello."
    raw = kit.server.requests[0].raw
    assert "tools" not in raw


def test_earlier_answers_stay_in_the_conversation(kit: Kit) -> None:
    kit.server.script([Say("Which region do you mean?"), Say("12 orders.")])
    first = kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    kit.provider.complete(
        "system",
        [QUESTION, Message("assistant", first.text), Message("user", "the Busan warehouse")],
        TOOLS,
        timeout_s=10,
    )

    seen = kit.server.requests[1].exchange
    assert seen.user_text == "the Busan warehouse"
    assert seen.round == 1
    assistant = next(m for m in kit.server.requests[1].raw["messages"] if m["role"] == "assistant")
    content = assistant["content"]
    if kit.kind == "anthropic":
        assert content == [{"type": "text", "text": "Which region do you mean?"}]
    elif kit.kind == "openai-native":
        assert content == "Which region do you mean?"
    else:
        assert json.loads(content) == {"answer": "Which region do you mean?"}


def test_anthropic_marks_system_prompt_and_tools_cacheable(fake_anthropic: FakeAnthropicServer) -> None:
    provider = make_provider("anthropic", fake_anthropic)
    fake_anthropic.script([Say("one"), Say("two")])

    first = provider.complete("A long system prompt.", [QUESTION], TOOLS, timeout_s=10)
    second = provider.complete("A long system prompt.", [QUESTION], TOOLS, timeout_s=10)

    raw = fake_anthropic.requests[0].raw
    assert raw["system"] == [{"type": "text", "text": "A long system prompt.", "cache_control": {"type": "ephemeral"}}]
    assert raw["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in tool for tool in raw["tools"][:-1])
    # The fake reports the cached prefix as written, then read; the reply's input tokens count both.
    usage_one = fake_anthropic.requests[0].answer["usage"]
    usage_two = fake_anthropic.requests[1].answer["usage"]
    assert usage_one["cache_creation_input_tokens"] > 0
    assert usage_two["cache_read_input_tokens"] > 0
    assert first.usage.input_tokens == second.usage.input_tokens
    provider.close()
