"""A Slack assistant thread's tool steps as task updates in the answer's stream, through the real slack_sdk against
the fake Slack Web API: the first step opens the stream, the answer continues it, and whatever breaks, the thread
shows exactly one answer."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.delivery import StatusReporter, deliver_answer, destination
from bot.outbound import Outbounds
from core.answer.model import Answer
from core.store.database import Store
from core.store.models import OutboxMessage
from core.store.repositories import turns as turn_repo
from tests.fakes.slack_server import TEAM_ID, FakeSlack
from tests.support import isolated_settings

DM = "D0TASKS"
CHANNEL = "C0TASKS"
ANSWER = "There were 4750 orders in 2024."


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        yield server


@pytest.fixture
def outbounds(slack: FakeSlack, tmp_path: Path) -> Outbounds:
    return Outbounds(isolated_settings(tmp_path, slack_bot_token=slack.token, slack_api_url=slack.url))


def answer_payload(answer: str = ANSWER) -> dict[str, Any]:
    return {
        "status": "answered",
        "answer": answer,
        "rounds": 3,
        "tables_used": ["erp.ORD_MST"],
        "sql": [
            {
                "database": "erp",
                "sql": "SELECT COUNT(*) FROM ORD_MST",
                "columns": ["n"],
                "rows": [[4750]],
                "truncated": False,
                "error": None,
            }
        ],
        "notes_saved": [],
    }


def new_turn(store: Store, *, assistant: bool = True) -> tuple[int, str]:
    """A running turn of an assistant thread (or of a channel thread); (turn id, thread ts)."""
    thread = f"{uuid.uuid4().int % 10**9}.000200"
    reference = {"surface": "assistant", "user_id": "U_SALES", "team_id": TEAM_ID} if assistant else None
    with store.transaction() as session:
        conversation = turn_repo.conversation(
            session,
            platform="slack",
            workspace_id=TEAM_ID,
            channel_id=DM if assistant else CHANNEL,
            thread_id=thread,
            private=assistant,
            reference=reference,
        )
        turn = turn_repo.create_turn(
            session, conversation.id, user_platform="slack", user_id="U_SALES", question="orders in 2024?", pins=()
        )
        return turn.id, thread


def finish(store: Store, turn_id: int, payload: dict[str, Any] | None = None) -> None:
    with store.transaction() as session:
        turn_repo.queue_answer(session, turn_id, Answer.from_stored(payload or answer_payload()))


def reporter(store: Store, outbounds: Outbounds, turn_id: int) -> StatusReporter:
    with store.transaction() as session:
        to = destination(session, turn_id)
    assert to is not None
    return StatusReporter(store, outbounds.for_platform("slack"), to, turn_id)


def work(report: StatusReporter) -> None:
    """Two tool steps, as the engine reports them: the search and the SQL."""
    report("Looking for tables about orders in erp…")
    report.step("step-1-1", "Looking for tables about orders in erp…", "in_progress")
    report.step("step-1-1", "Looking for tables about orders in erp…", "complete")
    report.step("step-2-1", "Running SQL on erp…", "in_progress")
    report.step("step-2-1", "Running SQL on erp…", "error")
    report.step("step-3-1", "Running SQL on erp…", "in_progress")


def stream_state(store: Store, turn_id: int) -> str | None:
    with store.transaction() as session:
        payload = session.scalar(
            select(OutboxMessage.payload).where(OutboxMessage.turn_id == turn_id, OutboxMessage.kind == "status")
        )
    return None if payload is None else payload.get("stream")


def test_tool_steps_stream_as_task_updates_and_the_answer_continues_the_stream(
    store: Store, slack: FakeSlack, outbounds: Outbounds
) -> None:
    turn_id, thread = new_turn(store)
    work(reporter(store, outbounds, turn_id))
    [streamed] = slack.thread(DM, thread)
    assert streamed.streaming is True
    assert streamed.task_display_mode == "plan"
    assert list(streamed.tasks) == ["step-1-1", "step-2-1", "step-3-1"]
    assert streamed.tasks["step-1-1"]["title"] == "Looking for tables about orders in erp"  # no trailing "…"
    assert streamed.tasks["step-1-1"]["history"] == ["in_progress", "complete"]
    assert streamed.tasks["step-2-1"]["status"] == "error"
    assert streamed.tasks["step-3-1"]["status"] == "in_progress"
    [start] = slack.calls_to("chat.startStream", ok=True)
    assert start.params["recipient_user_id"] == "U_SALES"
    assert start.params["recipient_team_id"] == TEAM_ID
    assert stream_state(store, turn_id) == "open"
    finish(store, turn_id)
    result = deliver_answer(store, outbounds, turn_id)
    assert result.outcome == "delivered"
    [answer] = slack.thread(DM, thread)  # the same message: the plan, then the answer
    assert result.message_id == answer.ts == streamed.ts
    assert answer.streaming is False
    assert ANSWER in answer.text
    assert "SELECT COUNT(*) FROM ORD_MST" in answer.block_text
    assert {t["status"] for t in answer.tasks.values()} == {"complete", "error"}  # nothing left in progress
    assert answer.tasks["step-3-1"]["history"] == ["in_progress", "complete"]
    assert answer.plan_title == "Answered in 3 steps"
    assert len(slack.calls_to("chat.startStream")) == 1
    assert slack.calls_to("chat.update") == []
    assert slack.calls_to("chat.postMessage") == []
    assert stream_state(store, turn_id) == "answering"
    assert slack.thread_status(DM, thread) == ""  # the status line set after the stream began is cleared
    assert deliver_answer(store, outbounds, turn_id).outcome == "nothing"
    assert len(slack.thread(DM, thread)) == 1


def test_a_stream_that_breaks_mid_answer_is_replaced_by_the_whole_answer(
    store: Store, slack: FakeSlack, outbounds: Outbounds
) -> None:
    turn_id, thread = new_turn(store)
    work(reporter(store, outbounds, turn_id))
    finish(store, turn_id, answer_payload("Orders by month. " * 60))  # several stream pieces
    slack.fail("chat.appendStream", "message_not_in_streaming_state")  # the stream expired
    assert deliver_answer(store, outbounds, turn_id).outcome == "delivered"
    [answer] = slack.thread(DM, thread)
    assert answer.streaming is False
    assert "Orders by month." in answer.block_text
    [update] = slack.calls_to("chat.update", ok=True)
    assert update.params["ts"] == answer.ts
    assert slack.calls_to("chat.postMessage") == []


def test_a_retry_after_the_answer_began_replaces_the_message_instead_of_appending_again(
    store: Store, slack: FakeSlack, outbounds: Outbounds
) -> None:
    turn_id, thread = new_turn(store)
    work(reporter(store, outbounds, turn_id))
    finish(store, turn_id)
    slack.fail("chat.stopStream", "internal_error")  # appended, then the stop failed, then the update too
    slack.fail("chat.update", "internal_error")
    assert deliver_answer(store, outbounds, turn_id).outcome == "retry"
    appended = len(slack.calls_to("chat.appendStream"))
    assert stream_state(store, turn_id) == "answering"
    assert deliver_answer(store, outbounds, turn_id).outcome == "delivered"
    assert len(slack.calls_to("chat.appendStream")) == appended  # the answer was not appended a second time
    [answer] = slack.thread(DM, thread)
    assert answer.text.count(ANSWER) <= 1
    assert ANSWER in answer.block_text
    assert answer.streaming is False


def test_a_failed_task_update_stops_the_updates_and_the_answer_replaces_the_stream(
    store: Store, slack: FakeSlack, outbounds: Outbounds
) -> None:
    turn_id, thread = new_turn(store)
    report = reporter(store, outbounds, turn_id)
    report.step("step-1-1", "Looking for tables about orders…", "in_progress")
    slack.fail("chat.appendStream", "ratelimited")
    report.step("step-1-1", "Looking for tables about orders…", "complete")  # fails: no more updates
    report.step("step-2-1", "Running SQL on erp…", "in_progress")
    assert len(slack.calls_to("chat.appendStream")) == 1
    assert stream_state(store, turn_id) == "broken"
    finish(store, turn_id)
    assert deliver_answer(store, outbounds, turn_id).outcome == "delivered"
    [answer] = slack.thread(DM, thread)
    assert ANSWER in answer.block_text
    assert [c.params["ts"] for c in slack.calls_to("chat.update", ok=True)] == [answer.ts]


def test_a_refused_stream_start_leaves_the_answer_to_be_posted(
    store: Store, slack: FakeSlack, outbounds: Outbounds
) -> None:
    turn_id, thread = new_turn(store)
    slack.fail("chat.startStream", "not_allowed_token_type", times=2)  # an older workspace: no streaming at all
    report = reporter(store, outbounds, turn_id)
    report.step("step-1-1", "Looking for tables about orders…", "in_progress")
    report.step("step-1-1", "Looking for tables about orders…", "complete")
    assert len(slack.calls_to("chat.startStream")) == 1  # not tried again for every step
    finish(store, turn_id)
    assert deliver_answer(store, outbounds, turn_id).outcome == "delivered"
    [answer] = slack.thread(DM, thread)
    assert ANSWER in answer.block_text
    assert slack.calls_to("chat.postMessage", ok=True)


def test_a_redelivered_job_continues_the_open_stream(store: Store, slack: FakeSlack, outbounds: Outbounds) -> None:
    turn_id, thread = new_turn(store)
    reporter(store, outbounds, turn_id).step("step-1-1", "Looking for tables about orders…", "in_progress")
    again = reporter(store, outbounds, turn_id)  # the job ran again after its worker died
    again.step("step-9-1", "Running SQL on erp…", "in_progress")
    [streamed] = slack.thread(DM, thread)
    assert list(streamed.tasks) == ["step-1-1", "step-9-1"]
    finish(store, turn_id)
    assert deliver_answer(store, outbounds, turn_id).outcome == "delivered"
    [answer] = slack.thread(DM, thread)
    assert answer.tasks["step-1-1"]["status"] == "complete"


def test_a_channel_turn_shows_no_task_updates(store: Store, slack: FakeSlack, outbounds: Outbounds) -> None:
    turn_id, thread = new_turn(store, assistant=False)
    report = reporter(store, outbounds, turn_id)
    report("Looking for tables about orders…")
    report.step("step-1-1", "Looking for tables about orders…", "in_progress")
    assert slack.calls_to("chat.startStream") == []
    [status] = slack.thread(CHANNEL, thread)
    assert "Looking for tables about orders" in status.block_text
    finish(store, turn_id)
    assert deliver_answer(store, outbounds, turn_id).outcome == "delivered"
    [answer] = slack.thread(CHANNEL, thread)
    assert answer.ts == status.ts
