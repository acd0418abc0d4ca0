"""Fixtures for the model provider tests: the fake servers, and one provider per way of speaking to a model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.fakes.model_server import FakeModelServer
from workers.models.anthropic_provider import AnthropicProvider
from workers.models.openai_provider import OpenAIProvider
from workers.models.types import ModelProvider, ToolSpec

ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef"
OPENAI_KEY = "sk-openai-test-0123456789abcdef"

SEARCH_TABLES = ToolSpec(
    name="search_tables",
    description="Find the tables that hold the data a question needs.\n\nReturns candidates, live tables first.",
    parameters={
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "databases": {"type": "array", "items": {"type": "string"}},
            "k": {"type": "integer"},
        },
        "required": ["question"],
    },
)
OPEN_TABLE_CARD = ToolSpec(
    name="open_table_card",
    description="Open the card of one table: columns, keys, sample values.",
    parameters={
        "type": "object",
        "properties": {"database": {"type": "string"}, "table": {"type": "string"}},
        "required": ["database", "table"],
    },
)
TOOLS = (SEARCH_TABLES, OPEN_TABLE_CARD)

#: The three ways a provider can speak to a model.
KINDS = ("anthropic", "openai-native", "openai-json")


@dataclass
class Kit:
    kind: str
    server: FakeModelServer
    provider: ModelProvider

    @property
    def native(self) -> bool:
        return self.kind != "openai-json"


def make_provider(kind: str, server: FakeModelServer, **options: object) -> AnthropicProvider | OpenAIProvider:
    if kind == "anthropic":
        return AnthropicProvider("claude-test", api_key=ANTHROPIC_KEY, base_url=server.url, **options)  # type: ignore[arg-type]
    mode = "json" if kind == "openai-json" else "native"
    return OpenAIProvider("local-model", api_key=OPENAI_KEY, base_url=server.url, tools_mode=mode, **options)  # type: ignore[arg-type]


@pytest.fixture(params=KINDS)
def kit(request: pytest.FixtureRequest) -> Iterator[Kit]:
    kind: str = request.param
    server: FakeModelServer = request.getfixturevalue("fake_anthropic" if kind == "anthropic" else "fake_openai")
    provider = make_provider(kind, server)
    yield Kit(kind, server, provider)
    provider.close()


@pytest.fixture(params=("anthropic", "openai-native"))
def native_kit(request: pytest.FixtureRequest) -> Iterator[Kit]:
    kind: str = request.param
    server: FakeModelServer = request.getfixturevalue("fake_anthropic" if kind == "anthropic" else "fake_openai")
    provider = make_provider(kind, server)
    yield Kit(kind, server, provider)
    provider.close()
