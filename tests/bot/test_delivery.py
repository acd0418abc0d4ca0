"""A chat turn's status message and its one answer, delivered to the fake Slack Web API through the real client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.delivery import MAX_ATTEMPTS, StatusReporter, deliver_answer, destination, pending_answers
from bot.outbound import Outbounds, SlackOutbound
from bot.slack.web import SlackPoster
from core.answer.model import Answer
from core.store.database import Store
from core.store.models import OutboxMessage
from core.store.repositories import turns as turn_repo
from tests.fakes.slack_server import FakeSlack
from tests.support import isolated_settings

CHANNEL = "C0DELIVERY"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        yield server


@pytest.fixture
def outbounds(slack: FakeSlack, tmp_path: Path) -> Outbounds:
    settings = isolated_settings(tmp_path, slack_bot_token=slack.token, slack_api_url=slack.url)
    return Outbounds(settings)


def payload(rows: int = 1, answer: str = "There were 4750 orders.") -> dict[str, Any]:
    return {
        "status": "answered",
        "answer": answer,
        "rounds": 3,
        "tables_used": ["erp.ORD_MST"],
        "sql": [
            {
                "database": "erp",
                "sql": "SELECT ORD_NO FROM ORD_MST",
                "columns": ["ORD_NO"],
                "rows": [[n] for n in range(rows)],
                "truncated": False,
                "error": None,
            }
        ],
        "notes_saved": [],
    }


def chat_turn(store: Store, *, answer: dict[str, Any] | None = None, platform: str = "slack") -> tuple[int, str]:
    """A finished chat turn in its own thread, with its answer queued; (turn id, thread ts)."""
    thread = f"{uuid.uuid4().int % 10**9}.000100"
    with store.transaction() as session:
        conversation = turn_repo.conversation(session, platform=platform, channel_id=CHANNEL, thread_id=thread)
        turn = turn_repo.create_turn(
            session, conversation.id, user_platform="slack", user_id="U_SALES", question="how many orders?", pins=()
        )
        turn_repo.queue_answer(session, turn.id, Answer.from_stored(answer or payload()))
        return turn.id, thread


def answer_row(store: Store, turn_id: int) -> OutboxMessage:
    with store.transaction() as session:
        row = session.scalars(
            select(OutboxMessage).where(OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "answer")
        ).one()
        session.expunge(row)
        return row


def test_the_answer_replaces_the_status_message(store: Store, slack: FakeSlack, outbounds: Outbounds) -> None:
    turn_id, thread = chat_turn(store)
    with store.transaction() as session:
        to = destination(session, turn_id)
    assert to is not None
    report = StatusReporter(store, outbounds.for_platform("slack"), to, turn_id)
    report("Searching tables…")
    report("Opening ORD_MST…")  # within the throttle interval: not sent
    [status] = slack.thread(CHANNEL, thread)
    assert "Searching tables" in status.block_text
    result = deliver_answer(store, outbounds, turn_id)
    assert result.outcome == "delivered"
    assert result.message_id == status.ts
    [answer] = slack.thread(CHANNEL, thread)
    assert "There were 4750 orders." in answer.block_text
    row = answer_row(store, turn_id)
    assert (row.status, row.message_id, row.attempts) == ("sent", status.ts, 1)
    assert deliver_answer(store, outbounds, turn_id).outcome == "nothing"  # delivered once, never again
    assert len(slack.thread(CHANNEL, thread)) == 1


def test_a_status_reporter_resumes_the_stored_status_message(store: Store, slack: FakeSlack) -> None:
    """A redelivered job's new reporter edits the status message the first attempt posted."""
    turn_id, thread = chat_turn(store)
    outbound = SlackOutbound(SlackPoster(slack.token, slack.url))
    with store.transaction() as session:
        to = destination(session, turn_id)
    assert to is not None
    StatusReporter(store, outbound, to, turn_id)("Searching tables…")
    StatusReporter(store, outbound, to, turn_id)("Running SQL on erp…")
    [status] = slack.thread(CHANNEL, thread)
    assert "Running SQL on erp" in status.block_text


def test_a_status_line_held_back_by_the_interval_is_shown_at_the_next_step(
    store: Store, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines that come faster than the edit interval are not lost: the latest one shows when the turn moves on."""
    turn_id, thread = chat_turn(store)
    outbound = SlackOutbound(SlackPoster(slack.token, slack.url))
    with store.transaction() as session:
        to = destination(session, turn_id)
    assert to is not None
    clock = [1000.0]
    monkeypatch.setattr("bot.delivery.time.monotonic", lambda: clock[0])
    reporter = StatusReporter(store, outbound, to, turn_id)
    reporter("Thinking…")
    reporter("Searching tables…")  # within the interval: held back
    reporter("Reading the order master table…")
    [status] = slack.thread(CHANNEL, thread)
    assert "Thinking" in status.block_text
    clock[0] += 2
    reporter.step("step-1-1", "Reading the order master table…", "complete")
    assert "Reading the order master table" in slack.thread(CHANNEL, thread)[0].block_text


def test_a_failed_csv_upload_keeps_the_answer_and_the_retry_edits_it(
    store: Store, slack: FakeSlack, outbounds: Outbounds
) -> None:
    turn_id, thread = chat_turn(store, answer=payload(rows=150))  # more rows than a Slack table shows: a CSV
    slack.fail("files.completeUploadExternal", "internal_error")
    first = deliver_answer(store, outbounds, turn_id)
    assert first.outcome == "retry"
    assert first.retry_in_s > 0
    [posted] = slack.thread(CHANNEL, thread)
    assert answer_row(store, turn_id).message_id == posted.ts
    assert deliver_answer(store, outbounds, turn_id).outcome == "delivered"
    [answer] = slack.thread(CHANNEL, thread)
    assert answer.ts == posted.ts
    assert answer.edits == 1
    assert len(slack.completed_files(CHANNEL)) == 1


def test_a_channel_that_is_gone_fails_at_once(store: Store, slack: FakeSlack, outbounds: Outbounds) -> None:
    turn_id, _ = chat_turn(store)
    slack.fail("chat.postMessage", "channel_not_found")
    result = deliver_answer(store, outbounds, turn_id)
    assert result.outcome == "failed"
    assert "channel_not_found" in (result.error or "")
    row = answer_row(store, turn_id)
    assert (row.status, row.attempts) == ("failed", 1)


def test_delivery_gives_up_after_its_attempts(store: Store, slack: FakeSlack, outbounds: Outbounds) -> None:
    turn_id, thread = chat_turn(store)
    slack.fail("chat.postMessage", "internal_error", times=MAX_ATTEMPTS)
    outcomes = [deliver_answer(store, outbounds, turn_id).outcome for _ in range(MAX_ATTEMPTS)]
    assert outcomes == ["retry"] * (MAX_ATTEMPTS - 1) + ["failed"]
    assert slack.thread(CHANNEL, thread) == []
    assert deliver_answer(store, outbounds, turn_id).outcome == "nothing"


def test_a_missing_bot_token_is_retried_not_lost(store: Store, tmp_path: Path) -> None:
    turn_id, _ = chat_turn(store)
    result = deliver_answer(store, Outbounds(isolated_settings(tmp_path)), turn_id)
    assert result.outcome == "retry"
    assert "SLACK_BOT_TOKEN" in (result.error or "")
    assert answer_row(store, turn_id).status == "pending"


def test_the_sweep_finds_answers_whose_last_attempt_is_old(store: Store, outbounds: Outbounds) -> None:
    fresh, _ = chat_turn(store)
    stale, _ = chat_turn(store)
    with store.transaction() as session:
        row = session.scalars(
            select(OutboxMessage).where(OutboxMessage.turn_id == stale, OutboxMessage.kind == "answer")
        ).one()
        row.created_at = row.created_at - timedelta(minutes=10)
    due = pending_answers(store, older_than_s=120, limit=1000)
    assert stale in due
    assert fresh not in due


def test_a_chat_turn_that_cannot_start_queues_its_failure_as_the_answer(store: Store) -> None:
    with store.transaction() as session:
        conversation = turn_repo.conversation(session, platform="slack", channel_id=CHANNEL, thread_id="no-answer")
        turn = turn_repo.create_turn(
            session, conversation.id, user_platform="slack", user_id="U_SALES", question="q", pins=()
        )
        turn_repo.fail_unstarted(session, turn.id, "I cannot answer right now: no model is configured")
        failed_id = turn.id
    row = answer_row(store, failed_id)
    assert row.payload["status"] == "failed"
    assert "no model is configured" in row.payload["answer"]
