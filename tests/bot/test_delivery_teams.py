"""A registered Teams bot's turn delivery while its Entra ID authority is down: the status message is skipped (the
turn goes on), the answer is retried with the delivery backoff and arrives, Bearer token and all, once the
authority is back."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bot.delivery import StatusReporter, deliver_answer, destination
from bot.outbound import Outbounds, TeamsOutbound
from bot.teams.adapter import TeamsPoster, parse_activity, teams_message
from core.store.database import Store
from core.store.models import OutboxMessage
from core.store.repositories import turns as turn_repo
from tests.bot.teams.test_adapter import channel_activity
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
        turn_repo.queue_answer(session, turn.id, {"status": "answered", "answer": "42 orders.", "sql": []})
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
