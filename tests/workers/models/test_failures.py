"""Failures: the SDK's retries as the only retry layer, the per-call deadline, and errors that never show the key."""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.fakes.model_server import Fail, FakeModelServer, Say, Slow
from tests.workers.models.conftest import ANTHROPIC_KEY, KINDS, OPENAI_KEY, TOOLS, Kit, make_provider
from workers.models.anthropic_provider import AnthropicProvider
from workers.models.openai_provider import OpenAIProvider
from workers.models.types import ContextExceeded, Message, ModelError, ModelTimeout

QUESTION = Message("user", "How many orders shipped to Busan last month?")
#: How far past its deadline a call may end (thread wake-up, closing the connection).
MARGIN_S = 0.5


@pytest.mark.parametrize("status", [529, 500])
def test_one_overloaded_answer_is_retried_once_by_the_sdk(kit: Kit, status: int) -> None:
    kit.server.script([Fail(status), Say("Recovered.")])

    reply = kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert reply.text == "Recovered."
    assert len(kit.server.requests) == 2
    assert [r.status for r in kit.server.requests] == [status, 200]
    assert kit.server.requests[1].headers["x-stainless-retry-count"] == "1"


def test_rate_limit_waits_for_retry_after(kit: Kit) -> None:
    kit.server.fail_first(1, 429, headers={"retry-after-ms": "600"})
    kit.server.script([Say("After the wait.")])

    reply = kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert reply.text == "After the wait."
    assert len(kit.server.requests) == 2
    gap = kit.server.requests[1].received_at - kit.server.requests[0].received_at
    assert gap >= 0.55


def test_persistent_failure_ends_after_the_sdk_retries_only(kit: Kit) -> None:
    kit.server.fail_first(10, 529)

    with pytest.raises(ModelError, match=r"is unavailable \(HTTP 529\)") as caught:
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=30)

    assert not isinstance(caught.value, ModelTimeout)
    assert len(kit.server.requests) == 3  # the first attempt and the SDK's two retries, nothing more


def test_a_slow_model_times_out_within_the_deadline(kit: Kit) -> None:
    kit.server.script([Slow(8.0, Say("Too late."))])

    started = time.monotonic()
    with pytest.raises(ModelTimeout, match=r"did not answer within 1\.0 s"):
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=1.0)
    elapsed = time.monotonic() - started

    # Cut off at the deadline, not when the model answers 8 s later (the margin absorbs a loaded machine).
    assert 0.9 <= elapsed <= 1.0 + 3 * MARGIN_S
    assert len(kit.server.requests) == 1  # no retry once the time is up


def test_retries_stop_when_the_deadline_comes(kit: Kit) -> None:
    kit.server.script([Slow(0.8, Fail(500)), Slow(0.8, Fail(500)), Slow(0.8, Say("never"))])

    started = time.monotonic()
    with pytest.raises(ModelError):
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=1.5)

    assert time.monotonic() - started <= 1.5 + MARGIN_S


def test_a_retry_that_cannot_fit_is_not_attempted(kit: Kit) -> None:
    kit.server.fail_first(1, 429, headers={"retry-after": "30"})
    kit.server.script([Say("never reached")])

    started = time.monotonic()
    with pytest.raises(ModelError, match=r"rate limiting requests \(HTTP 429\)"):
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=5.0)

    assert time.monotonic() - started < 1.0
    assert len(kit.server.requests) == 1
    kit.server.script([])  # the unused step is expected


def test_a_rejected_key_is_reported_without_the_key(kit: Kit) -> None:
    key = ANTHROPIC_KEY if kit.kind == "anthropic" else OPENAI_KEY
    kit.server.api_key = "the-right-key-0123456789"

    with pytest.raises(ModelError) as caught:
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    message = str(caught.value)
    assert "rejected the API key (HTTP 401)" in message
    assert key not in message
    assert key[4:-4] not in message
    assert ("ANTHROPIC_API_KEY" if kit.kind == "anthropic" else "OPENAI_API_KEY") in message
    assert len(kit.server.requests) == 1  # a 401 is not retried
    if kit.kind != "anthropic":
        assert key in json.dumps(kit.server.requests[0].answer)  # the server quoted the key back


def test_error_details_never_show_the_key(kit: Kit) -> None:
    key = ANTHROPIC_KEY if kit.kind == "anthropic" else OPENAI_KEY
    body = (
        {"type": "error", "error": {"type": "invalid_request_error", "message": f"bad request from key {key}"}}
        if kit.kind == "anthropic"
        else {"error": {"message": f"bad request from key {key}", "type": "invalid_request_error"}}
    )
    kit.server.script([Fail(400, body)])

    with pytest.raises(ModelError, match=r"HTTP 400: bad request from key \*\*\*") as caught:
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert key not in str(caught.value)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreachable_endpoint_is_a_model_error(kind: str) -> None:
    url = f"http://127.0.0.1:{_free_port()}" + ("" if kind == "anthropic" else "/v1")
    provider: AnthropicProvider | OpenAIProvider
    if kind == "anthropic":
        provider = AnthropicProvider("claude-test", api_key=ANTHROPIC_KEY, base_url=url, max_retries=0)
    else:
        provider = OpenAIProvider(
            "m", base_url=url, tools_mode="json" if kind == "openai-json" else "native", max_retries=0
        )

    with pytest.raises(ModelError, match=rf"cannot reach .* at {url}"):
        provider.complete("system", [QUESTION], TOOLS, timeout_s=5)
    provider.close()


def test_without_time_left_nothing_is_sent(kit: Kit) -> None:
    kit.server.script([Say("never")])

    with pytest.raises(ModelTimeout):
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=0)

    assert kit.server.requests == []
    kit.server.script([])


def test_fewer_retries_can_be_configured(kit: Kit) -> None:
    server: FakeModelServer = kit.server
    provider = make_provider(kit.kind, server, max_retries=0)
    server.script([Fail(529), Say("unused")])

    with pytest.raises(ModelError, match="HTTP 529"):
        provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert len(server.requests) == 1
    server.script([])
    provider.close()


CONTEXT_MESSAGES = {
    "anthropic": "prompt is too long: 210000 tokens > 200000 maximum",
    "openai": "request (13021 tokens) exceeds the available context size (12288 tokens), try increasing it",
}


def test_a_conversation_outgrowing_the_context_is_its_own_error(kit: Kit) -> None:
    message = CONTEXT_MESSAGES["anthropic" if kit.kind == "anthropic" else "openai"]
    kit.server.script([Fail(400, kit.server.error_body(400, message))])

    with pytest.raises(ContextExceeded) as caught:
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert "outgrew the context window" in str(caught.value)
    assert len(kit.server.requests) == 1  # a 400 is not retried


def test_another_bad_request_stays_a_plain_model_error(kit: Kit) -> None:
    kit.server.script([Fail(400, kit.server.error_body(400, "messages: at least one message is required"))])

    with pytest.raises(ModelError) as caught:
        kit.provider.complete("system", [QUESTION], TOOLS, timeout_s=10)

    assert not isinstance(caught.value, ContextExceeded)
    assert "HTTP 400" in str(caught.value)
