"""Teams feedback end to end: the answer card asks for Teams' feedback loop, and the `message/submitAction` invoke
a 👍/👎 sends is stored per turn and user (last click wins), with the text of Teams' feedback form as the reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import delete, select

from core.store.models import AnswerFeedback, OutboxMessage, VerifiedExample
from tests.e2e.conftest import TeamsStack
from tests.e2e.test_teams_chat import QUESTION, activity, cards
from tests.workers.turns.scripts import ORDERS_2024, search_then_query
from tests.workers.turns.worker_support import wait_until

pytestmark = pytest.mark.timeout(300)


def feedback_invoke(answer: dict[str, Any], service_url: str, reaction: str, text: str = "") -> dict[str, Any]:
    return {
        "type": "invoke",
        "name": "message/submitAction",
        "id": f"invoke-{reaction}",
        "serviceUrl": service_url,
        "channelId": "msteams",
        "from": {"id": "29:user-kim", "name": "Kim", "aadObjectId": "aad-kim"},
        "conversation": {"id": str(answer["conversation"]["id"]), "conversationType": "channel", "isGroup": True},
        "recipient": {"id": "28:bot-app", "name": "tablescout"},
        "replyToId": answer["id"],
        "value": {
            "actionName": "feedback",
            "actionValue": {"reaction": reaction, "feedback": json.dumps({"feedbackText": text})},
        },
    }


def _feedback(stack: TeamsStack) -> list[tuple[str, str, str | None]]:
    with stack.world.installation.store.transaction() as session:
        rows = session.scalars(select(AnswerFeedback).where(AnswerFeedback.user_platform == "teams")).all()
        return [(r.user_id, r.rating, r.reason) for r in rows]


@pytest.fixture(autouse=True)
def _feedback_forgotten(teams_stack: TeamsStack) -> Iterator[None]:
    def forget() -> None:
        with teams_stack.world.installation.store.transaction() as session:
            session.execute(delete(AnswerFeedback))
            session.execute(delete(VerifiedExample))

    forget()
    yield
    forget()


def test_teams_feedback_loop_stores_the_last_click_with_its_reason(teams_stack: TeamsStack) -> None:
    stack = teams_stack
    stack.model.script(search_then_query(QUESTION, "erp", "ORD_MST", ORDERS_2024, "{value} orders."))
    assert stack.post_activity(activity(stack.connector.url, QUESTION, activity_id="1700000000901")).status_code == 200

    def answered() -> dict[str, Any] | None:
        if not cards(stack.connector):
            return None
        with stack.world.installation.store.transaction() as session:
            sent = set(session.scalars(select(OutboxMessage.message_id).where(OutboxMessage.status == "sent")))
        found = [m for m in stack.connector.messages.values() if m.get("attachments") and m["id"] in sent]
        return found[0] if found else None

    wait_until(lambda: answered() is not None, 90, "the answer card")
    answer = answered()
    assert answer is not None
    assert answer["channelData"]["feedbackLoopEnabled"] is True
    url = stack.connector.url
    reply = stack.post_activity(feedback_invoke(answer, url, "dislike", "It counts cancelled orders"))
    assert reply.status_code == 200, reply.text
    assert _feedback(stack) == [("aad-kim", "bad", "It counts cancelled orders")]
    assert stack.post_activity(feedback_invoke(answer, url, "like")).status_code == 200  # last click wins
    assert _feedback(stack) == [("aad-kim", "good", None)]
    with stack.world.installation.store.transaction() as session:  # the asker's 👍 proposes the SQL
        [example] = session.scalars(select(VerifiedExample)).all()
        assert (example.database, example.sql, example.proposed_by_platform) == ("erp", ORDERS_2024, "teams")
    stranger = feedback_invoke(answer, url, "like") | {"replyToId": "act-unknown"}
    assert stack.post_activity(stranger).status_code == 200
    assert len(_feedback(stack)) == 1
