"""Slack feedback end to end: an answer with its native result table and 👍/👎 buttons, then signed block_actions
and view_submission requests into the real bolt app, stored per turn and user; the asker's 👍 proposes a verified
example."""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import delete, select

from core.store.models import AnswerFeedback, OutboxMessage, VerifiedExample
from tests.e2e.conftest import CHANNEL, ChatStack, event_payload
from tests.fakes.slack_server import BOT_USER_ID, SlackCall, SlackMessage, block_problems
from tests.workers.turns.scripts import ORDERS_2024, search_then_query
from tests.workers.turns.worker_support import wait_until

pytestmark = pytest.mark.timeout(300)

QUESTION = "How many orders were placed in 2024?"


def _answer(stack: ChatStack, ts: str) -> SlackMessage | None:
    for message in stack.slack.thread(CHANNEL, ts):
        if any(b.get("type") == "context_actions" for b in message.blocks):
            return message
    return None


def _click(stack: ChatStack, answer: SlackMessage, user: str, value: str) -> None:
    action = {
        "type": "block_actions",
        "team": {"id": "T0FAKE", "domain": "fake"},
        "user": {"id": user, "name": user.lower()},
        "api_app_id": "A0TABLESCOUT",
        "trigger_id": f"trigger-{user}-{value}",
        "container": {"type": "message", "message_ts": answer.ts, "channel_id": CHANNEL, "is_ephemeral": False},
        "channel": {"id": CHANNEL, "name": "general"},
        "message": {"type": "message", "ts": answer.ts, "text": answer.text},
        "actions": [
            {
                "type": "feedback_buttons",
                "action_id": "answer_feedback",
                "block_id": "fb",
                "value": value,
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    response = stack.post_slack_form(urllib.parse.urlencode({"payload": json.dumps(action)}))
    assert response.status_code == 200, response.text


def _delivered(stack: ChatStack, ts: str) -> bool:
    """The answer is in the thread and the outbox has recorded which message it is."""
    answer = _answer(stack, ts)
    if answer is None:
        return False
    with stack.world.installation.store.transaction() as session:
        ids = session.scalars(select(OutboxMessage.message_id).where(OutboxMessage.status == "sent")).all()
    return answer.ts in ids


def _feedback(stack: ChatStack) -> list[tuple[str, str, str | None]]:
    with stack.world.installation.store.transaction() as session:
        rows = session.scalars(select(AnswerFeedback).order_by(AnswerFeedback.user_id)).all()
        return [(r.user_id, r.rating, r.reason) for r in rows]


@pytest.fixture(autouse=True)
def _feedback_forgotten(chat_stack: ChatStack) -> Iterator[None]:
    """The store outlives a test: each test here starts and ends without feedback or examples."""

    def forget() -> None:
        with chat_stack.world.installation.store.transaction() as session:
            session.execute(delete(AnswerFeedback))
            session.execute(delete(VerifiedExample))

    forget()
    yield
    forget()


def test_feedback_buttons_store_the_last_click_per_user_and_a_reason_and_the_askers_thumbs_up_proposes_an_example(
    chat_stack: ChatStack,
) -> None:
    stack = chat_stack
    opened: list[SlackCall] = []

    def views_open(call: SlackCall) -> dict[str, Any]:
        opened.append(call)
        return {"view": {"id": "V1"}}

    stack.slack.register("views.open", views_open)
    stack.model.script(search_then_query(QUESTION, "erp", "ORD_MST", ORDERS_2024, "{value} orders."))
    ts = f"{time.time():.6f}"
    event = {"type": "app_mention", "user": "U_SALES", "text": f"<@{BOT_USER_ID}> {QUESTION}", "ts": ts}
    stack.post_slack(event_payload(event | {"channel": CHANNEL, "event_ts": ts}, "Ev_FEEDBACK_1"))
    wait_until(lambda: _delivered(stack, ts), 90, "the answer with feedback buttons")
    answer = _answer(stack, ts)
    assert answer is not None
    assert block_problems(answer.blocks) == []
    [table] = [b for b in answer.blocks if b["type"] == "data_table"]
    expected = stack.world.erp_scalar(ORDERS_2024)
    assert table["rows"][1] == [{"type": "raw_number", "value": expected, "text": f"{expected:,}"}]
    assert "SELECT COUNT(*) FROM ORD_MST" in answer.block_text  # the SQL still shown with the answer

    _click(stack, answer, "U_OTHER", "good")
    _click(stack, answer, "U_OTHER", "bad")  # last click wins
    assert _feedback(stack) == [("U_OTHER", "bad", None)]
    [modal] = opened
    view = json.loads(modal.params["view"]) if isinstance(modal.params["view"], str) else modal.params["view"]
    assert modal.params["trigger_id"] == "trigger-U_OTHER-bad"
    assert view["callback_id"] == "feedback_reason"
    submission = {
        "type": "view_submission",
        "team": {"id": "T0FAKE", "domain": "fake"},
        "user": {"id": "U_OTHER"},
        "view": view
        | {
            "state": {
                "values": {"reason": {"reason": {"type": "plain_text_input", "value": "Counts cancelled orders too"}}}
            }
        },
    }
    response = stack.post_slack_form(urllib.parse.urlencode({"payload": json.dumps(submission)}))
    assert response.status_code == 200, response.text
    assert _feedback(stack) == [("U_OTHER", "bad", "Counts cancelled orders too")]
    with stack.world.installation.store.transaction() as session:  # someone else's 👍 proposes nothing
        assert session.scalars(select(VerifiedExample)).all() == []

    _click(stack, answer, "U_SALES", "good")  # the asker's 👍
    assert _feedback(stack) == [("U_OTHER", "bad", "Counts cancelled orders too"), ("U_SALES", "good", None)]
    with stack.world.installation.store.transaction() as session:
        [example] = session.scalars(select(VerifiedExample)).all()
        assert (example.question, example.database, example.sql) == (QUESTION, "erp", ORDERS_2024)
        assert example.tables == ["ORD_MST"]
        assert (example.status, example.proposed_by) == ("proposed", "U_SALES")
    _click(stack, answer, "U_SALES", "good")  # again: still one example
    with stack.world.installation.store.transaction() as session:
        assert len(session.scalars(select(VerifiedExample)).all()) == 1


def test_a_click_on_a_message_that_is_no_answer_stores_nothing(chat_stack: ChatStack) -> None:
    stack = chat_stack
    ts = stack.slack.add_message(CHANNEL, "a human message")
    _click(stack, stack.slack.message(CHANNEL, ts), "U_OTHER", "good")
    assert _feedback(stack) == []
