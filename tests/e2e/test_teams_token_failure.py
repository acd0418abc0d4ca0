"""Issue 30, item 9, end to end: a registered Teams bot whose Entra ID token endpoint answers HTTP 500. A real worker
runs the turn and stores its answer (the model is asked; the status message is skipped); the answer's delivery is
what waits, with the true reason on its outbox row, and it arrives once Entra ID issues tokens again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.intake import IncomingMessage, accept
from bot.teams.adapter import parse_activity, teams_message
from core.store.models import OutboxMessage, Turn
from tests.e2e.test_teams_chat import QUESTION, activity, cards
from tests.fakes.directory_servers import Answer
from tests.fakes.model_server import FakeModelServer, Say
from tests.fakes.teams_connector import FakeTeamsConnector
from tests.fakes.teams_entra import FakeBotEntra
from tests.fakes.teams_fixtures import (
    BOT_ACCESS_TOKEN,
    BOT_APP_ID,
    BOT_APP_PASSWORD,
    BOT_TENANT,
    bot_entra,
    fake_teams_connector,
)
from tests.turn_world import TurnWorld
from tests.workers.turns.worker_support import Worker, enqueue, flush_broker, wait_until, worker_environment

__all__ = ["fake_teams_connector"]

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def failing_entra(tmp_path: Path) -> Iterator[FakeBotEntra]:
    entra = bot_entra(tmp_path / "entra-tls")
    entra.fail_tokens(Answer(500, {"error": "server_error", "error_description": "AADSTS50000: try again later"}))
    with entra:
        yield entra


def stored_teams_turn(world: TurnWorld, connector: FakeTeamsConnector, activity_id: str) -> int:
    """The turn the bot server stores for a channel message whose replies go to `connector`."""
    message = teams_message(parse_activity(activity(connector.url, QUESTION, activity_id=activity_id)))
    incoming = IncomingMessage(
        platform="teams",
        event_id=message.activity_id,
        workspace_id=message.tenant_id or "",
        channel_id=message.conversation_id,
        thread_id=message.thread_id or "",
        user_id=message.user_aad_object_id or message.user_id,
        text=message.text,
        private=message.personal,
        reference=message.reference,
    )
    with world.installation.store.transaction() as session:
        accepted = accept(session, incoming)
    assert accepted.turn_id is not None
    return accepted.turn_id


def answer_row(world: TurnWorld, turn_id: int) -> tuple[str, int, str | None] | None:
    with world.installation.store.transaction() as session:
        row = session.execute(
            select(OutboxMessage.status, OutboxMessage.attempts, OutboxMessage.last_error).where(
                OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "answer"
            )
        ).first()
    return None if row is None else (row.status, row.attempts, row.last_error)


def test_a_token_endpoint_answering_500_delays_the_answer_and_fails_nothing(
    turn_world: TurnWorld,
    fake_anthropic: FakeModelServer,
    fake_teams_connector: FakeTeamsConnector,
    failing_entra: FakeBotEntra,
    tmp_path: Path,
) -> None:
    flush_broker()
    fake_anthropic.script([Say("About 42 orders.")])
    env = worker_environment(
        turn_world,
        fake_anthropic,
        teams_app_id=BOT_APP_ID,
        teams_app_password=BOT_APP_PASSWORD,
        teams_tenant_id=BOT_TENANT,
        entra_login_url=failing_entra.url,
    ) | {"REQUESTS_CA_BUNDLE": str(failing_entra.ca_file)}
    worker = Worker(env, tmp_path / "worker.log")
    try:
        worker.wait_ready()
        turn_id = stored_teams_turn(turn_world, fake_teams_connector, "1700000000909")
        enqueue(turn_id)
        wait_until(lambda: (answer_row(turn_world, turn_id) or ("", 0, None))[1] >= 1, 60, "a delivery attempt")
        with turn_world.installation.store.transaction() as session:
            turn = session.get(Turn, turn_id)
            assert turn is not None
            assert (turn.status, turn.answer, turn.error) == ("answered", "About 42 orders.", None)
        assert len(fake_anthropic.requests) == 1  # the model ran although no status message could be shown
        status, _, last_error = answer_row(turn_world, turn_id) or ("", 0, None)
        assert status == "pending"
        assert last_error is not None
        assert "no Bot Framework token" in last_error
        assert "failed the token request (HTTP Error: 500)" in last_error
        assert fake_teams_connector.requests == []

        failing_entra.fail_tokens(None)
        wait_until(lambda: bool(cards(fake_teams_connector)), 60, "the answer card once Entra ID is back")
        wait_until(lambda: (answer_row(turn_world, turn_id) or ("",))[0] == "sent", 10, "the answer row sent")
    finally:
        worker.stop()
    [card] = cards(fake_teams_connector)
    assert "About 42 orders." in str(card)
    assert len(fake_teams_connector.created) == 1  # the answer, posted once
    assert {r.headers.get("Authorization") for r in fake_teams_connector.requests} == {f"Bearer {BOT_ACCESS_TOKEN}"}
    log = (tmp_path / "worker.log").read_text(errors="replace")
    assert "MsalServiceError" not in log
