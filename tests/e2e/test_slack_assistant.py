"""Slack assistant threads end to end: signed assistant events into the real slack-bolt app, a real worker, the
greeting, title, status line and streamed answer in the fake Slack."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from sqlalchemy import select

from core.store.models import Conversation, OutboxMessage
from core.store.repositories import feedback as feedback_repo
from core.store.repositories import turns as turn_repo
from tests.e2e.conftest import CHANNEL, ChatStack, event_payload
from tests.fakes.model_server import Say
from tests.fakes.slack_server import TEAM_ID, SlackMessage
from tests.workers.turns.scripts import ORDERS_2024, search_then_query
from tests.workers.turns.worker_support import wait_until

pytestmark = pytest.mark.timeout(300)

DM = "D0ASSIST"
QUESTION = "How many orders were placed in 2024?"


def new_ts() -> str:
    return f"{time.time():.6f}"


def thread_started(user: str, thread_ts: str, viewing: str = CHANNEL) -> dict[str, Any]:
    return {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": user,
            "context": {"channel_id": viewing, "team_id": TEAM_ID, "enterprise_id": ""},
            "channel_id": DM,
            "thread_ts": thread_ts,
        },
        "event_ts": new_ts(),
    }


def user_message(user: str, thread_ts: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "channel_type": "im",
        "user": user,
        "text": text,
        "ts": new_ts(),
        "thread_ts": thread_ts,
        "channel": DM,
        "team": TEAM_ID,
    }


def start_thread(stack: ChatStack, user: str, event_id: str, viewing: str = CHANNEL) -> str:
    thread_ts = new_ts()
    assert stack.post_slack(event_payload(thread_started(user, thread_ts, viewing), event_id)).status_code == 200
    return thread_ts


def context_changed(user: str, thread_ts: str, viewing: str) -> dict[str, Any]:
    return {
        "type": "assistant_thread_context_changed",
        "assistant_thread": {
            "user_id": user,
            "context": {"channel_id": viewing, "team_id": TEAM_ID},
            "channel_id": DM,
            "thread_ts": thread_ts,
        },
        "event_ts": new_ts(),
    }


def prompts_shown(stack: ChatStack, thread_ts: str | None = None) -> list[dict[str, Any]]:
    calls = [
        c
        for c in stack.slack.calls_to("assistant.threads.setSuggestedPrompts", ok=True)
        if thread_ts is None or c.params.get("thread_ts") == thread_ts
    ]
    prompts = calls[-1].params["prompts"]
    return list(json.loads(prompts) if isinstance(prompts, str) else prompts)


def stored_context(stack: ChatStack, thread_ts: str) -> dict[str, Any]:
    with stack.world.installation.store.transaction() as session:
        reference = session.scalar(
            select(Conversation.reference).where(Conversation.channel_id == DM, Conversation.thread_id == thread_ts)
        )
    assert reference is not None
    return dict(reference.get("context") or {})


def channel_answered(stack: ChatStack, channel: str, databases: list[str]) -> None:
    """An earlier answered question in a channel's thread that used `databases` (what the channel asks about)."""
    with stack.world.installation.store.transaction() as session:
        conversation = turn_repo.conversation(
            session, platform="slack", workspace_id=TEAM_ID, channel_id=channel, thread_id=new_ts()
        )
        turn = turn_repo.create_turn(
            session, conversation.id, user_platform="slack", user_id="U_SALES", question="invoices?", pins=()
        )
        turn.status, turn.answer = "answered", "Some invoices."
        turn.tables_used = [f"{d}.SOME_TABLE" for d in databases]


def model_inputs(stack: ChatStack, question: str) -> str:
    """Everything the model was sent for the turns asking `question`."""
    return "\n".join(json.dumps(r.raw) for r in stack.model.requests if question in json.dumps(r.raw))


def answers(stack: ChatStack, thread_ts: str) -> list[SlackMessage]:
    return [m for m in stack.slack.thread(DM, thread_ts) if m.streaming is not True]


def test_a_new_thread_greets_with_prompts_that_name_only_permitted_databases(chat_stack: ChatStack) -> None:
    stack = chat_stack
    start_thread(stack, "U_GUEST", "Ev_ASSIST_GUEST")  # the default role: erp only, never billing
    [greeting] = stack.slack.messages(DM)
    assert "erp" in greeting.text
    prompts = prompts_shown(stack)
    assert 1 <= len(prompts) <= 4
    shown = json.dumps(prompts) + greeting.text
    assert "erp" in shown
    assert "billing" not in shown
    context_changed = {
        "type": "assistant_thread_context_changed",
        "assistant_thread": {
            "user_id": "U_GUEST",
            "context": {"channel_id": "C0OTHER", "team_id": TEAM_ID},
            "channel_id": DM,
            "thread_ts": greeting.thread_ts,
        },
        "event_ts": new_ts(),
    }
    assert stack.post_slack(event_payload(context_changed, "Ev_ASSIST_CONTEXT")).status_code == 200
    with stack.world.installation.store.transaction() as session:
        reference = session.scalar(select(Conversation.reference).where(Conversation.channel_id == DM))
    assert reference is not None
    assert reference["surface"] == "assistant"
    assert reference["context"]["channel_id"] == "C0OTHER"


def test_a_question_in_an_assistant_thread_is_titled_shows_status_and_streams_one_answer(
    chat_stack: ChatStack,
) -> None:
    stack = chat_stack
    stack.model.latency_s = 1.2  # slower than the status throttle, so each step's status is shown
    stack.model.script(search_then_query(QUESTION, "erp", "ORD_MST", ORDERS_2024, "{value} orders."))
    thread_ts = start_thread(stack, "U_SALES", "Ev_ASSIST_START")
    question = event_payload(user_message("U_SALES", thread_ts, QUESTION), "Ev_ASSIST_Q")
    assert stack.post_slack(question).status_code == 200
    try:
        wait_until(lambda: len(answers(stack, thread_ts)) >= 2, 90, "the streamed answer")
    except AssertionError:
        print("Slack calls:", [(c.method, c.answer) for c in stack.slack.calls], stack.turns_in(DM, thread_ts))
        raise
    titles = [c.params["title"] for c in stack.slack.calls_to("assistant.threads.setTitle", ok=True)]
    assert titles == [QUESTION]
    statuses = [c.params["status"] for c in stack.slack.calls_to("assistant.threads.setStatus", ok=True)]
    assert any("Looking for tables about orders" in s for s in statuses), statuses
    assert any("Running SQL on erp" in s for s in statuses), statuses
    assert stack.slack.calls_to("chat.update") == []  # no status message to replace
    [_greeting, answer] = stack.slack.thread(DM, thread_ts)
    assert stack.slack.calls_to("chat.startStream", ok=True)
    assert stack.slack.calls_to("chat.stopStream", ok=True)
    assert answer.streaming is False
    expected = stack.world.erp_scalar(ORDERS_2024)
    assert f"{expected} orders." in answer.text
    assert "SELECT COUNT(*) FROM ORD_MST" in answer.block_text  # the SQL comes at the end of the stream
    [start] = stack.slack.calls_to("chat.startStream", ok=True)
    assert start.params["recipient_user_id"] == "U_SALES"
    # The tool steps were task updates in the stream, which the answer then continued: one plan, all done.
    assert start.params["task_display_mode"] == "plan"
    titles_shown = [t["title"] for t in answer.tasks.values()]
    expected = ["Looking for tables about orders", "Reading the order master table", "Running SQL on erp"]
    assert titles_shown == expected, titles_shown
    assert all(t["history"] == ["in_progress", "complete"] for t in answer.tasks.values()), answer.tasks
    assert answer.plan_title == "Answered in 3 steps"
    assert answer.ts == start.answer["ts"]
    [turn] = stack.turns_in(DM, thread_ts)
    assert turn["private"]
    assert turn["status"] == "answered"
    with stack.world.installation.store.transaction() as session:
        row = session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == "answer", OutboxMessage.turn_id == turn["id"])
        ).one()
        assert (row.status, row.message_id) == ("sent", answer.ts)
    # Slack delivers the question again: nothing new is posted.
    assert stack.post_slack(question, retry_num=1).status_code == 200
    time.sleep(1)
    assert len(stack.slack.thread(DM, thread_ts)) == 2
    assert len(stack.slack.calls_to("assistant.threads.setTitle")) == 1


@pytest.mark.parametrize("broken", ["chat.startStream", "chat.appendStream"])
def test_a_failing_stream_falls_back_and_the_user_gets_exactly_one_answer(chat_stack: ChatStack, broken: str) -> None:
    stack = chat_stack
    long_answer = "Orders by month. " * 60  # over one stream piece, so appendStream is called
    stack.model.script([Say(long_answer.strip())])
    stack.slack.fail(broken, "streaming_state_conflict" if broken != "chat.startStream" else "not_allowed_token_type")
    thread_ts = start_thread(stack, "U_SALES", f"Ev_ASSIST_START_{broken}")
    event = user_message("U_SALES", thread_ts, "How did orders go by month?")
    assert stack.post_slack(event_payload(event, f"Ev_ASSIST_FAIL_{broken}")).status_code == 200
    wait_until(lambda: len(answers(stack, thread_ts)) >= 2, 90, "the answer after the fallback")
    time.sleep(1)  # would a second answer arrive?
    [_, answer] = stack.slack.thread(DM, thread_ts)
    assert answer.streaming is not True
    assert "Orders by month." in answer.text + answer.block_text
    assert stack.slack.calls_to(broken, ok=False)
    if broken == "chat.startStream":
        assert stack.slack.calls_to("chat.postMessage", ok=True)[-1].params["thread_ts"] == thread_ts
    else:
        [update] = stack.slack.calls_to("chat.update", ok=True)  # the broken stream became the whole answer
        assert update.params["ts"] == answer.ts
        assert "Orders by month." in answer.block_text
    [turn] = stack.turns_in(DM, thread_ts)
    assert turn["status"] == "answered"


def test_the_channel_the_user_views_leads_the_prompts_and_the_questions_of_its_own_user_only(
    chat_stack: ChatStack,
) -> None:
    stack = chat_stack
    finance = "C0FINANCE"
    channel_answered(stack, finance, ["billing"])
    channel_answered(stack, finance, ["billing", "erp"])
    stack.model.script(lambda exchange: Say("Invoices went up."))
    # Sales may query erp and billing: viewing the finance channel, billing comes first.
    thread_ts = start_thread(stack, "U_SALES", "Ev_VIEW_START", viewing=finance)
    greeting = stack.slack.thread(DM, thread_ts)[0].text
    assert "use billing and erp, so I look there first" in greeting, greeting
    assert "billing" in prompts_shown(stack, thread_ts)[0]["message"]
    # Someone else's context for this thread is not taken.
    other = event_payload(context_changed("U_GUEST", thread_ts, "C0SECRET"), "Ev_VIEW_OTHER")
    assert stack.post_slack(other).status_code == 200
    assert stored_context(stack, thread_ts)["channel_id"] == finance
    question = "How much did we invoice last month?"
    event = user_message("U_SALES", thread_ts, question)
    assert stack.post_slack(event_payload(event, "Ev_VIEW_Q")).status_code == 200
    wait_until(lambda: len(answers(stack, thread_ts)) >= 2, 90, "the answer")
    sent = model_inputs(stack, question)
    assert "viewing a channel whose questions use: billing, erp" in sent, sent[:2000]
    # The guest may query erp only: the finance channel's billing is never named to them.
    guest_ts = start_thread(stack, "U_GUEST", "Ev_VIEW_GUEST", viewing=finance)
    guest_greeting = stack.slack.thread(DM, guest_ts)[0].text
    assert "billing" not in guest_greeting + json.dumps(prompts_shown(stack, guest_ts))
    assert "use erp, so I look there first" in guest_greeting
    guest_question = "How many orders were there last month?"
    guest_event = user_message("U_GUEST", guest_ts, guest_question)
    assert stack.post_slack(event_payload(guest_event, "Ev_VIEW_GQ")).status_code == 200
    wait_until(lambda: len(answers(stack, guest_ts)) >= 2, 90, "the guest's answer")
    assert "viewing a channel whose questions use: erp (" in model_inputs(stack, guest_question)


def test_before_the_first_question_the_prompts_follow_the_channel_the_user_moves_to(chat_stack: ChatStack) -> None:
    stack = chat_stack
    channel_answered(stack, "C0ORDERS", ["erp"])
    channel_answered(stack, "C0BILLING", ["billing"])
    thread_ts = start_thread(stack, "U_SALES", "Ev_MOVE_START", viewing="C0ORDERS")
    assert "@erp" in prompts_shown(stack, thread_ts)[0]["message"]
    moved = event_payload(context_changed("U_SALES", thread_ts, "C0BILLING"), "Ev_MOVE_CHANGED")
    assert stack.post_slack(moved).status_code == 200
    assert stored_context(stack, thread_ts)["channel_id"] == "C0BILLING"
    assert "@billing" in prompts_shown(stack, thread_ts)[0]["message"]


def test_prompts_offer_approved_questions_the_user_may_ask(chat_stack: ChatStack) -> None:
    stack = chat_stack
    asked = {
        "How many orders shipped to Busan in 2024?": ("erp", ["ORD_MST"]),
        "Who earns the most in sales?": ("erp", ["EMP_MST"]),  # the guest may not see EMP_*
        "Which invoices are overdue?": ("billing", ["INV_HDR"]),  # nor billing
    }
    ids = []
    with stack.world.installation.store.transaction() as session:
        for question, (database, tables) in asked.items():
            example = feedback_repo.add_example(
                session,
                turn_id=None,
                question=question,
                database=database,
                sql="SELECT 1",
                tables=tables,
                platform="slack",
                user_id="U_ADMIN",
            )
            feedback_repo.review_example(session, example, "approved", "U_ADMIN")
            ids.append(example.id)
    try:
        start_thread(stack, "U_GUEST", "Ev_ASSIST_EXAMPLES")
        prompts = prompts_shown(stack)
        assert prompts[0] == {
            "title": "How many orders shipped to Busan in 2024?",
            "message": "How many orders shipped to Busan in 2024?",
        }
        shown = json.dumps(prompts)
        assert "earns" not in shown
        assert "invoices" not in shown
        assert len(prompts) <= 4
    finally:
        with stack.world.installation.store.transaction() as session:
            for example_id in ids:
                feedback_repo.delete_example(session, example_id)
