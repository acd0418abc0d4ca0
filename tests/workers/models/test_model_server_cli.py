"""The fake model server as a process (for worker and command-line tests), driven by a JSON rules script."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import REPO
from tests.workers.models.conftest import TOOLS
from workers.models.anthropic_provider import AnthropicProvider
from workers.models.openai_provider import OpenAIProvider
from workers.models.types import Message, ModelProvider, ToolResult

SCRIPT = {
    "fail_first": {"count": 1, "status": 529},
    "rules": [
        {
            "when_user_contains": "orders",
            "steps": [
                {"call": "search_tables", "arguments": {"question": "orders shipped to Busan"}},
                {"calls": [{"tool": "open_table_card", "arguments": {"database": "erp", "table": "ORD_MST"}}]},
                {"say": "42 orders shipped to Busan."},
            ],
        },
        {"steps": [{"say": "I can only answer questions about orders."}]},
    ],
}


@pytest.fixture(params=["anthropic", "openai"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.model_server", "--provider", request.param, "--script", str(script)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening "), line + (process.stderr.read() if process.stderr else "")
        yield request.param, line.split()[1]
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=10)
    assert process.returncode == 0
    assert "problem" not in errors


def _provider(kind: str, url: str) -> ModelProvider:
    if kind == "anthropic":
        return AnthropicProvider("claude-test", api_key="sk-ant-any", base_url=url)
    return OpenAIProvider("local-model", base_url=url)


def test_rules_play_a_whole_question(served: tuple[str, str]) -> None:
    provider = _provider(*served)
    conversation = [Message("user", "How many orders shipped to Busan?")]
    replies = []
    for _ in range(3):
        reply = provider.complete("system", conversation, TOOLS, timeout_s=10)
        replies.append(reply)
        if not reply.tool_calls:
            break
        results = tuple(ToolResult(call.id, call.name, "a result") for call in reply.tool_calls)
        conversation += [
            Message("assistant", reply.text, tool_calls=reply.tool_calls),
            Message("user", tool_results=results),
        ]

    assert [[c.name for c in r.tool_calls] for r in replies] == [["search_tables"], ["open_table_card"], []]
    assert replies[-1].text == "42 orders shipped to Busan."

    other = provider.complete("system", [Message("user", "What is the weather?")], TOOLS, timeout_s=10)
    assert other.text == "I can only answer questions about orders."
