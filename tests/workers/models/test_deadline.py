"""The per-call deadline under the SDKs' retries, and the safe wording of failures."""

from __future__ import annotations

import email.utils
import socket
import time

import httpx2
import pytest

from tests.fakes.model_server import FakeAnthropicServer, Say
from tests.workers.models.conftest import KINDS, TOOLS
from workers.models.anthropic_provider import AnthropicProvider
from workers.models.deadline import call_deadline, deadline_http_client, retry_wait_bound
from workers.models.failures import display_endpoint, mask_secret
from workers.models.openai_provider import OpenAIProvider
from workers.models.types import Message, ModelError, ModelTimeout


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreachable_endpoint_gives_up_when_no_retry_fits(kind: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}" + ("" if kind == "anthropic" else "/v1")
    provider: AnthropicProvider | OpenAIProvider = (
        AnthropicProvider("claude-test", api_key="sk-ant-x", base_url=url)
        if kind == "anthropic"
        else OpenAIProvider("m", base_url=url, tools_mode="json" if kind == "openai-json" else "native")
    )

    started = time.monotonic()
    with pytest.raises(ModelError, match=rf"cannot reach .* at {url}: .*refused") as caught:
        provider.complete("system", [Message("user", "hi")], TOOLS, timeout_s=1.2)

    assert not isinstance(caught.value, ModelTimeout)
    assert time.monotonic() - started < 1.2
    provider.close()


def test_retry_wait_follows_the_server_then_the_backoff() -> None:
    assert retry_wait_bound(httpx2.Headers({"retry-after-ms": "250"}), 0) == 0.25
    assert retry_wait_bound(httpx2.Headers({"retry-after": "7"}), 0) == 7.0
    in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= retry_wait_bound(httpx2.Headers({"retry-after": in_a_minute}), 0) <= 61
    assert [retry_wait_bound(None, n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert retry_wait_bound(httpx2.Headers({"retry-after": "soon"}), 1) == 1.0


def test_the_client_is_unrestricted_outside_a_call() -> None:
    with FakeAnthropicServer() as server:
        server.script([Say("plain")])
        with deadline_http_client() as client:
            response = client.post(f"{server.url}/v1/messages", json={"model": "m", "messages": []})
        assert response.status_code == 200
        assert response.json()["content"] == [{"type": "text", "text": "plain"}]


def test_the_deadline_state_is_per_call() -> None:
    with call_deadline(5.0) as outer:
        with call_deadline(0.5) as inner:
            assert inner.remaining() <= 0.5
        assert outer.remaining() > 4.0


def test_shown_endpoints_carry_no_credentials() -> None:
    assert display_endpoint("https://user:pw@llm.example.com:8443/v1?key=abc") == "https://llm.example.com:8443/v1"
    assert display_endpoint("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"


def test_secrets_are_masked() -> None:
    key = "sk-ant-0123456789abcdef"
    assert mask_secret(f"key {key} rejected", key) == "key *** rejected"
    assert mask_secret(f"key sk-a{key[4:-4]}xxxx rejected", key) == "key sk-a***xxxx rejected"
    assert mask_secret("nothing here", None) == "nothing here"
