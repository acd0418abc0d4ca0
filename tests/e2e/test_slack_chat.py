"""Slack end to end: signed events into `tablescout serve`'s app, a real worker, answers in the fake Slack."""

from __future__ import annotations

import json
import time
import urllib.parse

import pytest
from sqlalchemy import func, select

from bot.token_commands import ADMINS_ONLY, IN_PRIVATE
from core.store.models import ExecutedSql, Note, OutboxMessage, ProcessedEvent
from tests.e2e.conftest import CHANNEL, ChatStack, event_payload
from tests.fakes.model_server import Call, Say
from tests.fakes.slack_server import BOT_USER_ID, SlackMessage
from tests.turn_world import TurnWorld
from tests.workers.turns.scripts import ORDERS_2024, search_then_query
from tests.workers.turns.worker_support import wait_until

pytestmark = pytest.mark.timeout(300)

QUESTION = "How many orders were placed in 2024?"


def mention(text: str, ts: str, *, user: str = "U_SALES", thread_ts: str | None = None) -> dict[str, object]:
    event: dict[str, object] = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER_ID}> {text}",
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def new_ts() -> str:
    return f"{time.time():.6f}"


def is_status(message: SlackMessage) -> bool:
    """The status message is one small context line ("Looking for tables about orders…"); the answer replaces it."""
    return len(message.blocks) == 1 and message.blocks[0].get("type") == "context"


def _answered(stack: ChatStack, thread_ts: str) -> list[str]:
    """The bot's answers in the thread (not a status message still showing progress)."""
    return [m.block_text for m in stack.slack.thread(CHANNEL, thread_ts) if not is_status(m)]


def _answer_rows(stack: ChatStack) -> int:
    with stack.world.installation.store.transaction() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(OutboxMessage)
                .where(OutboxMessage.kind == "answer", OutboxMessage.status == "sent")
            )
            or 0
        )


def test_a_signed_mention_gets_one_answer_in_its_thread_with_status_updates(chat_stack: ChatStack) -> None:
    stack = chat_stack
    stack.model.latency_s = 1.2  # slower than the status throttle, so each step's status is shown
    stack.model.script(search_then_query(QUESTION, "erp", "ORD_MST", ORDERS_2024, "{value} orders."))
    ts = new_ts()
    response = stack.post_slack(event_payload(mention(QUESTION, ts), "Ev_MENTION_1"))
    assert response.status_code == 200, response.text
    wait_until(lambda: bool(_answered(stack, ts)), 90, "the answer in the thread")
    replies = stack.slack.thread(CHANNEL, ts)
    assert len(replies) == 1, [r.block_text for r in replies]  # the status message became the answer
    answer = replies[0]
    expected = stack.world.erp_scalar(ORDERS_2024)
    assert f"{expected} orders." in answer.block_text
    assert "SELECT COUNT(*) FROM ORD_MST" in answer.block_text
    assert "erp.ORD_MST" in answer.block_text
    assert answer.unfurl_links is False or str(answer.unfurl_links).lower() == "false"
    statuses = [c.params.get("text", "") for c in stack.slack.calls_to("chat.update")]
    assert any("Looking for tables about orders" in s for s in statuses), statuses
    assert any("Running SQL on erp" in s for s in statuses), statuses
    [turn] = stack.turns_in(CHANNEL, ts)
    assert turn["status"] == "answered"
    assert turn["user_id"] == "U_SALES"
    assert not turn["private"]


def test_three_deliveries_of_one_event_make_one_turn_and_one_answer(chat_stack: ChatStack) -> None:
    stack = chat_stack
    stack.model.script([Say("There were some orders.")])
    ts = new_ts()
    payload = event_payload(mention(QUESTION, ts), "Ev_RETRIED_1")
    codes = [stack.post_slack(payload).status_code]
    codes += [stack.post_slack(payload, retry_num=n).status_code for n in (1, 2)]
    assert codes == [200, 200, 200]
    wait_until(lambda: bool(_answered(stack, ts)), 90, "the answer")
    time.sleep(2)  # would a second answer arrive?
    assert len(stack.slack.thread(CHANNEL, ts)) == 1
    assert len(stack.turns_in(CHANNEL, ts)) == 1
    assert len(stack.model.requests) == 1


@pytest.mark.parametrize(
    ("age_s", "secret"), [(0, "not-the-signing-secret"), (301, None)], ids=["bad-signature", "stale-timestamp"]
)
def test_a_bad_or_stale_signature_is_refused_and_nothing_is_stored(
    chat_stack: ChatStack, age_s: int, secret: str | None
) -> None:
    stack = chat_stack
    event_id = f"Ev_FORGED_{age_s}"
    kwargs = {"age_s": age_s} | ({"secret": secret} if secret else {})
    response = stack.post_slack(event_payload(mention(QUESTION, new_ts()), event_id), **kwargs)  # type: ignore[arg-type]
    assert response.status_code == 401
    with stack.world.installation.store.transaction() as session:
        assert session.scalar(select(ProcessedEvent).where(ProcessedEvent.event_id == event_id)) is None
    assert stack.slack.calls_to("chat.postMessage") == []


def test_a_direct_message_question_and_note_stay_private(chat_stack: ChatStack) -> None:
    stack = chat_stack
    dm = "D0SALES"
    stack.model.script(
        [
            Call("save_note", {"database": "erp", "table": "CUST_MST_TMP", "text": "CUST_MST_TMP is my scratch list"}),
            Say("Noted on erp.CUST_MST_TMP."),
        ]
    )
    event = {
        "type": "message",
        "channel_type": "im",
        "user": "U_SALES",
        "text": "remember this: CUST_MST_TMP is my scratch list",
        "ts": new_ts(),
        "channel": dm,
    }
    assert stack.post_slack(event_payload(event, "Ev_DM_NOTE")).status_code == 200
    wait_until(lambda: any(not is_status(m) for m in stack.slack.messages(dm)), 90, "the DM confirmation")
    [turn] = stack.turns_in(dm)
    assert turn["private"]
    assert turn["intent"] == "note"
    with stack.world.installation.store.transaction() as session:
        note = session.scalars(select(Note).where(Note.text == "CUST_MST_TMP is my scratch list")).one()
        assert note.private
        assert note.author_id == "U_SALES"
    confirmation = [m.block_text for m in stack.slack.messages(dm)]
    assert any("CUST_MST_TMP" in text for text in confirmation), confirmation
    assert stack.slack.messages(CHANNEL) == []  # nothing of the DM appears anywhere else


def test_a_database_pin_limits_search_to_that_database(chat_stack: ChatStack) -> None:
    stack = chat_stack
    stack.model.script([Call("search_tables", {"question": "customers"}), Say("Billing customers are in BILL_CUST.")])
    ts = new_ts()
    assert stack.post_slack(event_payload(mention("how many customers? @billing", ts), "Ev_PIN")).status_code == 200
    wait_until(lambda: bool(_answered(stack, ts)), 90, "the answer")
    [turn] = stack.turns_in(CHANNEL, ts)
    assert list(turn["pins"]) == ["billing"]
    searched = stack.model.requests[1].exchange.tool_results["search_tables"]
    listed = [line for line in searched.splitlines() if line[:1].isdigit()]
    assert listed, searched
    assert all(line.split(". ", 1)[1].startswith("billing.") for line in listed), searched


def test_remember_this_in_a_thread_attaches_the_note_and_names_the_table(chat_stack: ChatStack) -> None:
    stack = chat_stack
    stale = "ORD_MST_BAK is a stale copy from the 2023 migration"
    stack.model.script(
        [
            Say("Ask me anything about orders."),
            Call("save_note", {"database": "erp", "table": "ORD_MST_BAK", "text": stale}),
            Say("Noted on erp.ORD_MST_BAK."),
        ]
    )
    root = new_ts()
    assert stack.post_slack(event_payload(mention("hello", root), "Ev_THREAD_ROOT")).status_code == 200
    wait_until(lambda: bool(_answered(stack, root)), 90, "the first answer")
    follow_up = {
        "type": "message",
        "channel_type": "channel",
        "user": "U_SALES",
        "text": f"remember this: {stale}",
        "ts": new_ts(),
        "thread_ts": root,
        "channel": CHANNEL,
    }
    assert stack.post_slack(event_payload(follow_up, "Ev_THREAD_NOTE")).status_code == 200
    wait_until(lambda: len(_answered(stack, root)) == 2, 90, "the confirmation")
    confirmation = _answered(stack, root)[1]
    assert "ORD_MST_BAK" in confirmation
    turns = stack.turns_in(CHANNEL, root)
    assert [t["intent"] for t in turns] == ["question", "note"]  # one conversation: the thread
    with stack.world.installation.store.transaction() as session:
        note = session.scalars(select(Note).where(Note.text == stale)).one()
        assert not note.private
        assert note.thread_id == root


def test_a_reply_in_a_thread_the_bot_is_not_in_is_ignored(chat_stack: ChatStack) -> None:
    stack = chat_stack
    event = {
        "type": "message",
        "channel_type": "channel",
        "user": "U_SALES",
        "text": "lunch?",
        "ts": new_ts(),
        "thread_ts": "1600000000.000001",
        "channel": CHANNEL,
    }
    assert stack.post_slack(event_payload(event, "Ev_OTHER_THREAD")).status_code == 200
    assert stack.turns_in(CHANNEL, "1600000000.000001") == []


def test_salaries_are_no_permission_for_a_role_without_hr(chat_stack: ChatStack) -> None:
    world: TurnWorld = chat_stack.world
    stack = chat_stack
    stack.model.script(
        [
            Call("search_tables", {"question": "monthly salary of employees"}),
            Call("run_sql", {"database": "erp", "sql": "SELECT AVG(SALARY) FROM EMP_MST"}),
            Say("I have no permission to see salaries."),
        ]
    )
    ts = new_ts()
    assert stack.post_slack(event_payload(mention("average salary?", ts), "Ev_HR")).status_code == 200
    wait_until(lambda: bool(_answered(stack, ts)), 90, "the answer")
    assert "no permission" in stack.model.requests[1].exchange.tool_results["search_tables"]
    assert "no permission" in stack.model.requests[2].exchange.tool_results["run_sql"]
    [turn] = stack.turns_in(CHANNEL, ts)
    with world.installation.store.transaction() as session:
        audits = session.scalars(select(ExecutedSql).where(ExecutedSql.turn_id == turn["id"])).all()
    assert audits
    assert all(a.status != "ok" and a.row_count is None for a in audits), [(a.status, a.sql) for a in audits]
    assert "no permission" in _answered(stack, ts)[0]


def test_rate_limited_updates_post_the_answer_once_after_retry_after(chat_stack: ChatStack) -> None:
    stack = chat_stack
    stack.model.script([Say("There were 42 orders.")])
    stack.slack.rate_limit("chat.update", times=3, retry_after=1)
    ts = new_ts()
    assert stack.post_slack(event_payload(mention(QUESTION, ts), "Ev_429")).status_code == 200
    wait_until(lambda: bool(_answered(stack, ts)), 90, "the answer")
    time.sleep(2)
    assert len(stack.slack.thread(CHANNEL, ts)) == 1
    assert "There were 42 orders." in _answered(stack, ts)[0]
    assert len([c for c in stack.slack.calls_to("chat.update") if c.status == 429]) == 3
    assert _answer_rows(stack) >= 1


def test_a_mention_without_a_question_gets_a_hint_and_no_turn(chat_stack: ChatStack) -> None:
    stack = chat_stack
    ts = new_ts()
    event = mention("", ts)
    assert stack.post_slack(event_payload(event, "Ev_EMPTY")).status_code == 200
    wait_until(lambda: bool(stack.slack.thread(CHANNEL, ts)), 30, "the hint")
    [hint] = stack.slack.thread(CHANNEL, ts)
    assert "Ask me a business question" in hint.block_text
    assert stack.turns_in(CHANNEL, ts) == []
    assert stack.model.requests == []


def test_the_remember_this_shortcut_saves_the_message_it_was_used_on(chat_stack: ChatStack) -> None:
    stack = chat_stack
    knowledge = "CUST_MST_TMP is a scratch copy nobody maintains"
    stack.model.script(
        [
            Call("save_note", {"database": "erp", "table": "CUST_MST_TMP", "text": knowledge}),
            Say("Noted on erp.CUST_MST_TMP."),
        ]
    )
    message_ts = new_ts()
    action = {
        "type": "message_action",
        "callback_id": "remember_this",
        "trigger_id": "1337.42.abcd",
        "response_url": "https://hooks.slack.com/app/T0FAKE/1/abc",
        "team": {"id": "T0FAKE", "domain": "fake"},
        "channel": {"id": CHANNEL, "name": "general"},
        "user": {"id": "U_SALES", "name": "kim"},
        "message_ts": message_ts,
        "message": {"type": "message", "user": "U_GUEST", "ts": message_ts, "text": knowledge},
    }
    body = urllib.parse.urlencode({"payload": json.dumps(action)})
    response = stack.post_slack_form(body)
    assert response.status_code == 200, response.text
    wait_until(lambda: bool(_answered(stack, message_ts)), 90, "the confirmation")
    assert "CUST_MST_TMP" in _answered(stack, message_ts)[0]
    [turn] = stack.turns_in(CHANNEL, message_ts)
    assert turn["intent"] == "note"
    assert turn["user_id"] == "U_SALES"  # the note is the shortcut user's, not the message author's
    assert stack.model.requests[0].exchange.user_text.endswith(knowledge)
    again = stack.post_slack_form(body)  # the shortcut used twice on one message saves one note
    assert again.status_code == 200
    assert len(stack.turns_in(CHANNEL, message_ts)) == 1


def test_token_commands_are_answered_by_the_server_with_no_turn(chat_stack: ChatStack) -> None:
    """The bot server hands its configuration to the intake: a sales user (no admin role) is told only admins manage
    tokens, in a DM; in a channel the command is refused before anything else (bot/token_commands.py)."""
    stack = chat_stack
    dm = "D0TOKENS"
    event = {"type": "message", "channel_type": "im", "user": "U_SALES", "text": "token create", "ts": new_ts()}
    assert stack.post_slack(event_payload(event | {"channel": dm}, "Ev_DM_TOKEN")).status_code == 200
    ts = new_ts()
    assert stack.post_slack(event_payload(mention("token list", ts), "Ev_CH_TOKEN")).status_code == 200
    wait_until(lambda: bool(stack.slack.messages(dm)) and bool(stack.slack.thread(CHANNEL, ts)), 30, "the replies")
    assert [m.block_text for m in stack.slack.messages(dm)] == [ADMINS_ONLY]
    assert [m.block_text for m in stack.slack.thread(CHANNEL, ts)] == [IN_PRIVATE]
    assert stack.turns_in(dm) == []
    assert stack.turns_in(CHANNEL, ts) == []
    assert stack.model.requests == []
