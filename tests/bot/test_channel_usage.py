"""The viewed channel's databases: learned from the channel's shared answered questions, read only for the assistant
thread's own user, named only where the reader may query them."""

from __future__ import annotations

import uuid
from typing import Any

from core.store.database import Store
from core.store.models import Conversation
from core.store.repositories import turns as turn_repo
from core.store.repositories.channel_usage import ASSISTANT_SURFACE, databases_asked_about, viewed_channel
from workers.turns.first_input import DatabaseList, render_first_input

TEAM = "T0USAGE"


def answered(
    store: Store,
    channel: str,
    *,
    tables: list[str],
    pins: tuple[str, ...] = (),
    private: bool = False,
    status: str = "answered",
) -> None:
    with store.transaction() as session:
        conversation = turn_repo.conversation(
            session,
            platform="slack",
            workspace_id=TEAM,
            channel_id=channel,
            thread_id=uuid.uuid4().hex,
            private=private,
        )
        turn = turn_repo.create_turn(
            session, conversation.id, user_platform="slack", user_id="U1", question="q?", pins=pins
        )
        turn.status, turn.tables_used = status, tables


def test_a_channels_databases_are_those_its_shared_answered_questions_used(store: Store) -> None:
    channel = f"C{uuid.uuid4().hex[:8].upper()}"
    answered(store, channel, tables=["billing.INV_MST", "billing.INV_DTL"])  # one question counts billing once
    answered(store, channel, tables=["erp.ORD_MST"], pins=("erp",))
    answered(store, channel, tables=["erp.CUST_MST"])
    answered(store, channel, tables=["hr.EMP_MST"], private=True)  # a private thread of the channel: not counted
    answered(store, channel, tables=["crm.LEADS"], status="failed")  # no answer: not counted
    with store.transaction() as session:
        found = databases_asked_about(session, platform="slack", workspace_id=TEAM, channel_id=channel)
        elsewhere = databases_asked_about(session, platform="slack", workspace_id="T0OTHER", channel_id=channel)
    assert found == ["erp", "billing"]
    assert elsewhere == []


def thread(reference: dict[str, Any] | None, channel: str = "D0ASSIST") -> Conversation:
    return Conversation(platform="slack", workspace_id=TEAM, channel_id=channel, thread_id="1.1", reference=reference)


def test_only_the_channel_slack_sent_for_the_threads_own_user_is_read() -> None:
    context = {"channel_id": "C0FIN", "team_id": TEAM}
    mine: dict[str, Any] = {"surface": ASSISTANT_SURFACE, "user_id": "U_ME", "context": context}
    assert viewed_channel(thread(mine), "U_ME") == "C0FIN"
    assert viewed_channel(thread(mine), "U_SOMEONE_ELSE") is None
    assert viewed_channel(thread({**mine, "surface": None}), "U_ME") is None  # a DM thread, not an assistant one
    assert viewed_channel(thread({"surface": ASSISTANT_SURFACE, "user_id": "U_ME"}), "U_ME") is None  # no context
    assert viewed_channel(thread(None, channel="C0FIN"), "U_ME") is None  # a channel conversation
    same = {**mine, "context": {"channel_id": "D0ASSIST"}}
    assert viewed_channel(thread(same), "U_ME") is None  # viewing the assistant DM itself


def test_the_first_input_names_the_viewed_default_unless_the_question_pins_a_database() -> None:
    listing = DatabaseList(allowed=[], forbidden=[])
    text = render_first_input(listing, "How much did we invoice?", (), "", ["billing"])
    assert "The user is viewing a channel whose questions use: billing" in text
    pinned = render_first_input(listing, "How much did we invoice?", ("erp",), "", ["billing"])
    assert "viewing a channel" not in pinned
    assert "pinned the search to: erp" in pinned
