"""What a chat user reads when the model service or a database cannot be reached: a plain sentence, no host, URL
or driver text; the turn's stored error and the log keep the details for the operator."""

from __future__ import annotations

import socket

import pytest
from sqlalchemy import select

from core.store.models import OutboxMessage
from tests.fakes.model_server import Fail, FakeModelServer
from tests.turn_world import TurnWorld
from workers.models.types import MODEL_REFUSED, MODEL_UNAVAILABLE


@pytest.fixture(params=["anthropic", "openai"])
def model_server(request: pytest.FixtureRequest) -> FakeModelServer:
    return request.getfixturevalue(f"fake_{request.param}")  # type: ignore[no-any-return]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answer_payload(world: TurnWorld, turn_id: int) -> str:
    with world.installation.store.transaction() as session:
        row = session.scalars(
            select(OutboxMessage).where(OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "answer")
        ).one()
        return str(row.payload["answer"])


def test_a_model_endpoint_that_is_down_reads_as_not_answering(
    turn_world: TurnWorld, model_server: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    port = _closed_port()
    down = f"http://127.0.0.1:{port}" + ("/v1" if "openai" in type(model_server).__name__.lower() else "")
    key = "anthropic_base_url" if "anthropic" in type(model_server).__name__.lower() else "openai_base_url"
    turn_id = turn_world.submit("How many orders were placed in 2024?", thread=f"T_DOWN_{key}")
    turn_world.run(turn_world.environment(model_server, **{key: down}), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "failed"
    assert stored["answer"] == MODEL_UNAVAILABLE
    assert _answer_payload(turn_world, turn_id) == MODEL_UNAVAILABLE  # what Slack or Teams would post
    assert str(port) in stored["error"]  # the operator's detail
    assert any(str(port) in r.getMessage() for r in caplog.records)


def test_a_refused_request_tells_the_user_without_the_servers_words(
    turn_world: TurnWorld, model_server: FakeModelServer
) -> None:
    model_server.script([Fail(401, body=model_server.error_body(401, "invalid x-api-key at gateway-7.internal"))])
    turn_id = turn_world.submit("How many orders were placed in 2024?", thread=f"T_401_{type(model_server).__name__}")
    turn_world.run(turn_world.environment(model_server), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "failed"
    assert stored["answer"] == MODEL_REFUSED
    assert "127.0.0.1" not in stored["answer"]
    assert "HTTP 401" in stored["error"]
