"""Pytest fixtures for the fake model servers, registered for every test folder by `pytest_plugins` in
tests/conftest.py.

Each fixture yields a started server with an empty script (`server.script([...])` sets one) and, when the test ends,
stops it and fails the test if the script itself went wrong (a request found no step, or a step the mode cannot
express), since such a test would otherwise pass or fail for the wrong reason.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.model_server import FakeAnthropicServer, FakeModelServer, FakeOpenAIServer


def check_script_problems(server: FakeModelServer) -> None:
    assert not server.problems, f"the fake {server.provider} server's script went wrong: {server.problems}"


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    """A fake Anthropic Messages API; its base URL (for ANTHROPIC_BASE_URL) is `fake_anthropic.url`."""
    with FakeAnthropicServer() as server:
        yield server
    check_script_problems(server)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A fake OpenAI chat completions API; its base URL (for OPENAI_BASE_URL) is `fake_openai.url`."""
    with FakeOpenAIServer() as server:
        yield server
    check_script_problems(server)
