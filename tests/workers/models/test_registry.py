"""Choosing the provider from the settings, and the errors and how-to text for a missing or broken setup."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ConfigError
from tests.fakes.model_server import FakeAnthropicServer, FakeOpenAIServer, Say
from tests.support import isolated_settings
from workers.models.anthropic_provider import AnthropicProvider
from workers.models.openai_provider import OpenAIProvider
from workers.models.registry import describe_model_setup, parse_model_setting, provider_from_settings
from workers.models.types import Message


@pytest.fixture(autouse=True)
def _no_vendor_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_no_model_configured(tmp_path: Path) -> None:
    assert provider_from_settings(isolated_settings(tmp_path)) is None
    assert provider_from_settings(isolated_settings(tmp_path, model="  ")) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("openai:qwen2.5:7b", ("openai", "qwen2.5:7b")),  # Ollama model names carry a colon of their own
        (" OpenAI : gpt-4o ", ("openai", "gpt-4o")),
    ],
)
def test_model_setting_is_parsed(value: str, expected: tuple[str, str]) -> None:
    assert parse_model_setting(value) == expected


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("gpt-4o", "names no provider"),
        ("mistral:large", "unknown provider 'mistral'"),
        ("anthropic:", "names no model"),
    ],
)
def test_malformed_model_setting(tmp_path: Path, value: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as caught:
        provider_from_settings(isolated_settings(tmp_path, model=value, anthropic_api_key="k"))
    assert "anthropic:" in str(caught.value)


def test_anthropic_needs_a_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs ANTHROPIC_API_KEY"):
        provider_from_settings(isolated_settings(tmp_path, model="anthropic:claude-sonnet-4-5"))


def test_json_tool_mode_is_for_openai_models_only(tmp_path: Path) -> None:
    settings = isolated_settings(tmp_path, model="anthropic:claude-x", anthropic_api_key="k", model_tools="json")
    with pytest.raises(ConfigError, match="TABLESCOUT_MODEL_TOOLS=json"):
        provider_from_settings(settings)


def test_anthropic_provider_uses_key_and_base_url(tmp_path: Path) -> None:
    with FakeAnthropicServer(api_key="sk-ant-right") as server:
        server.script([Say("Hello from the fake.")])
        settings = isolated_settings(
            tmp_path, model="anthropic:claude-x", anthropic_api_key="sk-ant-right", anthropic_base_url=server.url
        )
        provider = provider_from_settings(settings)
        assert isinstance(provider, AnthropicProvider)
        assert provider.label == "anthropic:claude-x"

        assert provider.complete("", [Message("user", "hi")], (), timeout_s=10).text == "Hello from the fake."
        assert server.requests[0].raw["model"] == "claude-x"
        provider.close()


@pytest.mark.parametrize("tools_mode", ["native", "json"])
def test_openai_provider_for_a_local_server_needs_no_key(tmp_path: Path, tools_mode: str) -> None:
    with FakeOpenAIServer() as server:
        server.script([Say("Hello from a local model.")])
        settings = isolated_settings(
            tmp_path, model="openai:qwen2.5:7b", openai_base_url=server.url, model_tools=tools_mode
        )
        provider = provider_from_settings(settings)
        assert isinstance(provider, OpenAIProvider)
        assert provider.tools_mode == tools_mode

        assert provider.complete("", [Message("user", "hi")], (), timeout_s=10).text == "Hello from a local model."
        assert server.requests[0].headers["authorization"] == "Bearer local"
        assert server.requests[0].raw["model"] == "qwen2.5:7b"
        assert ("response_format" in server.requests[0].raw) == (tools_mode == "json")
        provider.close()


def test_openai_key_is_sent_when_set(tmp_path: Path) -> None:
    with FakeOpenAIServer(api_key="sk-real") as server:
        server.script([Say("ok")])
        settings = isolated_settings(
            tmp_path, model="openai:gpt-4o", openai_api_key="sk-real", openai_base_url=server.url
        )
        provider = provider_from_settings(settings)
        assert provider is not None
        assert provider.complete("", [Message("user", "hi")], (), timeout_s=10).text == "ok"


def test_setup_description_names_the_variables() -> None:
    text = describe_model_setup()
    for name in (
        "TABLESCOUT_MODEL=anthropic:",
        "TABLESCOUT_MODEL=openai:",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "TABLESCOUT_MODEL_TOOLS=json",
    ):
        assert name in text
