"""Admins review proposed verified examples from Slack: the real slack-bolt app (HTTP mode, signatures checked)
against the fake Slack Web API. The asker's 👍 sends each admin who may see the example's tables a message with
Approve / Reject buttons; a signed click decides as `tablescout examples approve|reject --user slack:ID` does; anyone
else is told, only them, that they may not."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.delivery import deliver_answer
from bot.outbound import Outbounds
from bot.slack.app import HttpReply, SlackInbound
from bot.slack.example_review import REFUSED
from core.answer.model import Answer
from core.store.database import Store
from core.store.models import VerifiedExample
from core.store.repositories import directory
from core.store.repositories import turns as turn_repo
from search.encoders import embedder_for
from tests.fakes.slack_server import TEAM_ID, FakeSlack, SlackMessage, block_problems
from tests.support import isolated_settings
from tests.workers.turns.worker_support import wait_until

SECRET = "review-signing-secret"
CHANNEL = "C0REVIEW"
SQL = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT >= '2024-01-01'"
CONFIG = """\
roles:
  admins:
    admin: true
    grants:
      - database: erp
  narrow_admins:
    admin: true
    grants:
      - database: erp
        deny: ["ORD_*"]
  staff:
    grants:
      - database: erp
groups:
  - platform: slack
    group: S_REV_ADMINS
    roles: [admins]
  - platform: slack
    group: "@rev-narrow"
    roles: [narrow_admins]
default_role: staff
"""
ADMIN, NARROW, ASKER, OTHER, GONE = "U_REV_ADMIN", "U_REV_NARROW", "U_REV_ASKER", "U_REV_OTHER", "U_REV_GONE"


@pytest.fixture(scope="module")
def people(store: Store) -> None:
    now = datetime.now(UTC)
    with store.transaction() as session:
        admin = directory.upsert_user(session, platform="slack", user_id=ADMIN, synced_at=now)
        gone = directory.upsert_user(session, platform="slack", user_id=GONE, synced_at=now, deactivated=True)
        narrow = directory.upsert_user(session, platform="slack", user_id=NARROW, synced_at=now)
        for user in (ASKER, OTHER):
            directory.upsert_user(session, platform="slack", user_id=user, synced_at=now)
        admins = directory.upsert_group(session, platform="slack", group_id="S_REV_ADMINS", synced_at=now)
        directory.replace_members(session, admins, [admin, gone])
        narrows = directory.upsert_group(
            session, platform="slack", group_id="S_REV_NARROW", handle="rev-narrow", synced_at=now
        )
        directory.replace_members(session, narrows, [narrow])


class App:
    def __init__(self, store: Store, slack: FakeSlack, home: Path) -> None:
        (home / "tablescout.yaml").write_text(CONFIG)
        self.settings = isolated_settings(
            home, slack_bot_token=slack.token, slack_signing_secret=SECRET, slack_api_url=slack.url
        )
        self.store, self.slack = store, slack
        self.executor = ThreadPoolExecutor(2)
        self.inbound = SlackInbound(self.settings, store, on_stored=lambda _turn: None, background=self.executor)

    def post(self, payload: dict[str, Any], secret: str = SECRET) -> HttpReply:
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        timestamp = str(int(time.time()))
        signature = "v0=" + hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": ["application/x-www-form-urlencoded"],
            "X-Slack-Request-Timestamp": [timestamp],
            "X-Slack-Signature": [signature],
        }
        return self.inbound.handle_http(body.encode(), "", headers)

    def click(self, message: SlackMessage, user: str, action_id: str, value: str, **extra: Any) -> HttpReply:
        action = {"type": "button", "action_id": action_id, "value": value, "action_ts": f"{time.time():.6f}"}
        if action_id == "answer_feedback":
            action["type"] = "feedback_buttons"
        payload = {
            "type": "block_actions",
            "team": {"id": TEAM_ID, "domain": "fake"},
            "user": {"id": user},
            "api_app_id": "A0TABLESCOUT",
            "trigger_id": f"trigger-{uuid.uuid4().hex[:6]}",
            "container": {"type": "message", "message_ts": message.ts, "channel_id": message.channel},
            "channel": {"id": message.channel},
            "message": {"type": "message", "ts": message.ts, "text": message.text},
            "actions": [action],
        }
        return self.post(payload, **extra)

    def answered(self, question: str) -> SlackMessage:
        """An answered channel question of ASKER's with its SQL, delivered as a real answer message."""
        thread = f"{time.time():.6f}"
        result = {
            "sql": [{"database": "erp", "sql": SQL, "columns": ["n"], "rows": [[4]], "truncated": False, "error": None}]
        }
        with self.store.transaction() as session:
            conversation = turn_repo.conversation(
                session, platform="slack", workspace_id=TEAM_ID, channel_id=CHANNEL, thread_id=thread
            )
            turn = turn_repo.create_turn(
                session, conversation.id, user_platform="slack", user_id=ASKER, question=question, pins=()
            )
            turn.status, turn.answer, turn.tables_used, turn.result = "answered", "4 orders.", ["erp.ORD_MST"], result
            turn_repo.queue_answer(
                session, turn.id, Answer.from_stored({"status": "answered", "answer": "4 orders."} | result)
            )
            turn_id = turn.id
        assert deliver_answer(self.store, Outbounds(self.settings), turn_id).outcome == "delivered"
        [answer] = self.slack.thread(CHANNEL, thread)
        return answer

    def example(self, question: str) -> VerifiedExample:
        with self.store.transaction() as session:
            found = session.query(VerifiedExample).filter(VerifiedExample.question == question).one()
            session.expunge(found)
            return found


@pytest.fixture
def app(store: Store, people: None, tmp_path: Path) -> Iterator[App]:
    with FakeSlack() as slack:
        made = App(store, slack, tmp_path)
        yield made
        made.executor.shutdown(wait=True)


def dm_of(user: str) -> str:
    return "D" + user[1:]


def buttons(message: SlackMessage) -> list[dict[str, Any]]:
    return [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]


def test_the_askers_thumbs_up_reaches_the_admins_and_an_admin_approves_it(app: App) -> None:
    question = f"How many orders since 2024? {uuid.uuid4().hex[:6]}"
    answer = app.answered(question)
    assert app.click(answer, OTHER, "answer_feedback", "good").status == 200  # not the asker: proposes nothing
    time.sleep(0.5)
    assert app.slack.messages(dm_of(ADMIN)) == []
    assert app.click(answer, ASKER, "answer_feedback", "good").status == 200
    wait_until(lambda: bool(app.slack.messages(dm_of(ADMIN))), 20, "the admin's review message")
    [review] = app.slack.messages(dm_of(ADMIN))
    assert block_problems(review.blocks) == []
    assert question in review.block_text
    assert "SELECT COUNT(*) FROM ORD_MST" in review.block_text
    assert f"<@{ASKER}>" in review.block_text
    assert [b["action_id"] for b in buttons(review)] == ["example_approve", "example_reject"]
    # Not to an admin who may not see ORD_MST, nor a deactivated one, nor anyone without an admin role.
    assert {c.params["channel"] for c in app.slack.calls_to("chat.postMessage")} == {CHANNEL, ADMIN}
    app.click(answer, ASKER, "answer_feedback", "good")  # the same 👍 again: no second proposal, no second message
    time.sleep(0.5)
    assert len(app.slack.messages(dm_of(ADMIN))) == 1

    example = app.example(question)
    value = str(example.id)
    assert app.click(review, OTHER, "example_approve", value).status == 200  # no admin role
    wait_until(lambda: len(app.slack.ephemerals) == 1, 20, "the refusal")
    assert app.slack.ephemerals[0] == (dm_of(ADMIN), OTHER, REFUSED)
    app.click(review, NARROW, "example_approve", value)  # an admin, but ORD_MST is hidden from them
    wait_until(lambda: len(app.slack.ephemerals) == 2, 20, "the second refusal")
    assert app.slack.ephemerals[1][1] == NARROW
    assert app.example(question).status == "proposed"
    assert buttons(app.slack.message(review.channel, review.ts))  # the message is unchanged

    assert app.click(review, ADMIN, "example_approve", value).status == 200
    wait_until(lambda: app.example(question).status == "approved", 60, "the approval")
    approved = app.example(question)
    assert approved.reviewed_by == f"slack:{ADMIN}"  # as `tablescout examples approve --user slack:ID` records it
    assert approved.reviewed_at is not None
    assert approved.embedding is not None  # retrievable for similar questions, in the vector space searches use
    searched = embedder_for(app.settings).embed([question])[0]
    assert float(np.dot(np.asarray(approved.embedding), searched)) > 0.999
    wait_until(lambda: not buttons(app.slack.message(review.channel, review.ts)), 20, "the decided message")
    decided = app.slack.message(review.channel, review.ts)
    assert f"Approved by <@{ADMIN}>" in decided.block_text
    assert question in decided.block_text

    app.click(review, ADMIN, "example_reject", value)  # a late click on a stale message: nothing changes
    wait_until(lambda: "Already approved" in app.slack.message(review.channel, review.ts).block_text, 20, "the note")
    assert app.example(question).status == "approved"
    assert not app.slack.ephemerals[2:]


def test_an_admin_rejects_and_an_unsigned_click_changes_nothing(app: App) -> None:
    question = f"How many orders were placed? {uuid.uuid4().hex[:6]}"
    answer = app.answered(question)
    app.click(answer, ASKER, "answer_feedback", "good")
    wait_until(lambda: bool(app.slack.messages(dm_of(ADMIN))), 20, "the admin's review message")
    [review] = app.slack.messages(dm_of(ADMIN))
    value = str(app.example(question).id)
    forged = app.click(review, ADMIN, "example_approve", value, secret="not-the-secret")
    assert forged.status == 401
    time.sleep(0.5)
    assert app.example(question).status == "proposed"
    app.click(review, ADMIN, "example_reject", value)
    wait_until(lambda: app.example(question).status == "rejected", 20, "the rejection")
    rejected = app.example(question)
    assert rejected.reviewed_by == f"slack:{ADMIN}"
    assert rejected.embedding is None
    wait_until(lambda: "Rejected by" in app.slack.message(review.channel, review.ts).block_text, 20, "the update")
    assert not buttons(app.slack.message(review.channel, review.ts))
