"""A registered Teams bot's turn delivery while its Entra ID authority is down or failing: the status message is
skipped (the turn goes on), the answer is retried with the delivery backoff and arrives, Bearer token and all, once
the authority is back, or is given up after MAX_ATTEMPTS with the reason."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.delivery import BACKOFF_S, MAX_ATTEMPTS, StatusReporter, deliver_answer, destination
from bot.outbound import Outbounds, TeamsOutbound
from bot.teams.adapter import parse_activity, teams_message
from bot.teams.poster import TeamsPoster
from core.answer.model import Answer as TurnAnswer
from core.store.database import Store
from core.store.models import OutboxMessage
from core.store.repositories import turns as turn_repo
from tests.bot.teams.test_adapter import channel_activity
from tests.fakes.directory_servers import Answer
from tests.fakes.teams_connector import FakeTeamsConnector
from tests.fakes.teams_entra import FakeBotEntra
from tests.fakes.teams_fixtures import BOT_ACCESS_TOKEN, bot_settings, fake_bot_entra, fake_teams_connector

__all__ = ["fake_bot_entra", "fake_teams_connector"]

ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"


def teams_turn(store: Store, connector: FakeTeamsConnector) -> int:
    """A finished Teams turn whose conversation reference points at `connector`, with its answer queued."""
    message = teams_message(parse_activity(channel_activity(connector.url, id=str(uuid.uuid4().int % 10**12))))
    with store.transaction() as session:
        conversation = turn_repo.conversation(
            session,
            platform="teams",
            channel_id=message.conversation_id,
            thread_id=message.thread_id or "",
            reference=message.reference,
        )
        turn = turn_repo.create_turn(
            session, conversation.id, user_platform="teams", user_id="aad-kim", question="how many?", pins=()
        )
        turn_repo.queue_answer(session, turn.id, TurnAnswer(status="answered", text="42 orders."))
        return turn.id


def answer_row(store: Store, turn_id: int) -> OutboxMessage:
    with store.transaction() as session:
        row = session.scalars(
            select(OutboxMessage).where(OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "answer")
        ).one()
        session.expunge(row)
        return row


def cards(connector: FakeTeamsConnector) -> list[dict[str, Any]]:
    return [
        a["content"]
        for m in connector.messages.values()
        for a in m.get("attachments") or []
        if a.get("contentType") == ADAPTIVE_CARD
    ]


def test_an_authority_down_for_a_while_delays_the_answer_and_fails_nothing(
    store: Store, tmp_path: Path, fake_bot_entra: FakeBotEntra, fake_teams_connector: FakeTeamsConnector
) -> None:
    turn_id = teams_turn(store, fake_teams_connector)
    settings = bot_settings(tmp_path, fake_bot_entra)
    outbounds = Outbounds(settings)
    outbounds.add("teams", TeamsOutbound(TeamsPoster(settings, backoff_base_s=0.01)))
    with store.transaction() as session:
        to = destination(session, turn_id)
    assert to is not None
    try:
        fake_bot_entra.go_down()
        report = StatusReporter(store, outbounds.for_platform("teams"), to, turn_id)
        report("Searching tables\u2026")  # the engine's progress callback: it must not raise, or the turn fails
        report("Running SQL on erp\u2026")
        first = deliver_answer(store, outbounds, turn_id)
        assert first.outcome == "retry"
        assert first.retry_in_s > 0
        assert "no Bot Framework token" in (first.error or "")
        row = answer_row(store, turn_id)
        assert (row.status, row.attempts) == ("pending", 1)
        assert fake_teams_connector.requests == []

        fake_bot_entra.come_back()
        second = deliver_answer(store, outbounds, turn_id)
        assert second.outcome == "delivered"
    finally:
        outbounds.close()
    [card] = cards(fake_teams_connector)
    assert "42 orders." in str(card)
    assert fake_teams_connector.created == [second.message_id]
    [answer] = fake_teams_connector.requests
    assert answer.headers.get("Authorization") == f"Bearer {BOT_ACCESS_TOKEN}"
    row = answer_row(store, turn_id)
    assert (row.status, row.attempts, row.last_error) == ("sent", 2, None)


def test_a_token_endpoint_answering_500_delays_the_answer_a_bounded_number_of_times(
    store: Store,
    tmp_path: Path,
    fake_bot_entra: FakeBotEntra,
    fake_teams_connector: FakeTeamsConnector,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 30, item 9: Entra ID answering 500 never escapes into the turn (its status message is skipped); the
    answer is tried again with the delivery backoff, MAX_ATTEMPTS times, and then given up once, with the true
    reason on its outbox row and one error in the log."""
    turn_id = teams_turn(store, fake_teams_connector)
    settings = bot_settings(tmp_path, fake_bot_entra)
    outbounds = Outbounds(settings)
    outbounds.add("teams", TeamsOutbound(TeamsPoster(settings, backoff_base_s=0.001, backoff_max_s=0.001)))
    with store.transaction() as session:
        to = destination(session, turn_id)
    assert to is not None
    fake_bot_entra.fail_tokens(Answer(500, {"error": "server_error", "error_description": "AADSTS50000: oops"}))
    try:
        report = StatusReporter(store, outbounds.for_platform("teams"), to, turn_id)
        report("Searching tables\u2026")  # the engine's progress callback: it must not raise, or the turn fails
        outcomes = [deliver_answer(store, outbounds, turn_id) for _ in range(MAX_ATTEMPTS + 1)]
    finally:
        outbounds.close()
    assert [o.outcome for o in outcomes] == ["retry"] * (MAX_ATTEMPTS - 1) + ["failed", "nothing"]
    assert [o.retry_in_s for o in outcomes[: MAX_ATTEMPTS - 1]] == list(BACKOFF_S[: MAX_ATTEMPTS - 1])
    row = answer_row(store, turn_id)
    assert (row.status, row.attempts) == ("failed", MAX_ATTEMPTS)
    assert row.last_error is not None
    assert "no Bot Framework token" in row.last_error
    assert "failed the token request (HTTP Error: 500)" in row.last_error
    given_up = [r for r in caplog.records if r.levelno >= logging.ERROR and r.name == "bot.delivery"]
    assert [r.getMessage() for r in given_up] == [
        f"turn {turn_id}: answer not delivered after {MAX_ATTEMPTS} attempts: {row.last_error}"
    ]
    assert fake_teams_connector.requests == []
