"""Chat events become stored turns with their jobs, once per event id; the relay publishes the jobs to Redis."""

from __future__ import annotations

import base64
import json
import uuid

import pytest
import redis
from celery import Celery
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bot.intake import EMPTY_NOTE, EMPTY_QUESTION, TURN_TASK, IncomingMessage, accept
from bot.messages import MAX_MESSAGE_CHARS
from bot.relay import publish_pending
from core.store.database import Store
from core.store.models import Conversation, OutboxMessage, ProcessedEvent, Source, Turn
from tests.redis_server import redis_url

REDIS_URL = redis_url(14)


def message(text: str, **values: object) -> IncomingMessage:
    fields: dict[str, object] = {
        "platform": "slack",
        "event_id": f"Ev{uuid.uuid4().hex[:10]}",
        "workspace_id": "T1",
        "channel_id": "C_SALES",
        "thread_id": "1700000000.000100",
        "user_id": "U_SALES",
        "text": text,
        "private": False,
        "bot_user_id": "U0BOT1",
    }
    return IncomingMessage(**(fields | values))  # type: ignore[arg-type]


@pytest.fixture
def sources(session: Session) -> Session:
    session.add_all(
        [
            Source(name="erp", aliases=["orders"], engine="sqlite", url_ref="erp"),
            Source(name="billing", engine="sqlite", url_ref="billing"),
        ]
    )
    session.flush()
    return session


def test_a_mention_becomes_a_turn_with_its_job(sources: Session) -> None:
    accepted = accept(sources, message("<@U0BOT1> how many invoices are overdue in @billing?"))
    assert accepted.turn_id is not None
    assert not accepted.duplicate
    turn = sources.get(Turn, accepted.turn_id)
    assert turn is not None
    assert turn.question == "how many invoices are overdue in billing?"
    assert turn.pins == ["billing"]
    assert turn.intent == "question"
    assert turn.status == "queued"
    conversation = sources.get(Conversation, turn.conversation_id)
    assert conversation is not None
    assert (conversation.platform, conversation.channel_id, conversation.thread_id) == (
        "slack",
        "C_SALES",
        "1700000000.000100",
    )
    [job] = sources.scalars(select(OutboxMessage).where(OutboxMessage.turn_id == turn.id)).all()
    assert (job.kind, job.status, job.payload) == ("job", "pending", {"task": TURN_TASK, "turn_id": turn.id})


def test_three_deliveries_of_one_event_make_one_turn(sources: Session) -> None:
    first = message("<@U0BOT1> how many orders shipped to Busan?")
    results = [accept(sources, first) for _ in range(3)]
    assert [r.duplicate for r in results] == [False, True, True]
    assert {r.turn_id for r in results} == {results[0].turn_id}
    turns = sources.scalar(select(func.count()).select_from(Turn).where(Turn.question.like("%Busan%")))
    assert turns == 1


def test_follow_ups_in_a_thread_share_the_conversation(sources: Session) -> None:
    one = accept(sources, message("<@U0BOT1> how many orders in 2024?"))
    two = accept(sources, message("and in 2023?", user_id="U_OTHER"))
    turns = [sources.get(Turn, t.turn_id) for t in (one, two)]
    assert turns[0] is not None
    assert turns[1] is not None
    assert turns[0].conversation_id == turns[1].conversation_id


def test_notes_and_empty_messages(sources: Session) -> None:
    note = accept(sources, message("remember this: ORD_MST_BAK is a stale copy", private=True, channel_id="D1"))
    turn = sources.get(Turn, note.turn_id)
    assert turn is not None
    assert (turn.intent, turn.question) == ("note", "ORD_MST_BAK is a stale copy")
    conversation = sources.get(Conversation, turn.conversation_id)
    assert conversation is not None
    assert conversation.private
    shortcut = accept(sources, message("RET_DTL holds returns, amounts are negative", remember=True))
    shortcut_turn = sources.get(Turn, shortcut.turn_id)
    assert shortcut_turn is not None
    assert shortcut_turn.intent == "note"
    empty_note = accept(sources, message("<@U0BOT1> remember this:"))
    assert (empty_note.turn_id, empty_note.reply) == (None, EMPTY_NOTE)
    empty = accept(sources, message("<@U0BOT1>"))
    assert (empty.turn_id, empty.reply) == (None, EMPTY_QUESTION)
    seen = sources.scalar(select(func.count()).select_from(ProcessedEvent).where(ProcessedEvent.turn_id.is_(None)))
    assert seen is not None
    assert seen >= 2  # answered at once, and still never processed twice
    huge = "how many orders " * (MAX_MESSAGE_CHARS // 10)
    for text in (f"<@U0BOT1> {huge}", f"<@U0BOT1> remember this: {huge}"):
        refused = accept(sources, message(text))
        assert refused.turn_id is None
        assert refused.reply is not None
        assert f"up to {MAX_MESSAGE_CHARS:,} characters" in refused.reply


def test_the_relay_publishes_each_job_to_redis_once(store: Store) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    with store.transaction() as session:
        session.add(Source(name=f"relay_{uuid.uuid4().hex[:6]}", engine="sqlite", url_ref="x"))
        accepted = accept(session, message("<@U0BOT1> how many customers?"))
    assert accepted.turn_id is not None
    celery = Celery("relay-test", broker=REDIS_URL)
    try:
        published = publish_pending(store, lambda name, args: celery.send_task(name, args=list(args)))
        again = publish_pending(store, lambda name, args: celery.send_task(name, args=list(args)))
    finally:
        celery.close()
    assert published >= 1
    assert again == 0
    bodies = [json.loads(raw) for raw in client.lrange("celery", 0, -1)]
    sent = [
        (b["headers"]["task"], json.loads(base64.b64decode(b["body"]))[0]) for b in bodies if b["headers"].get("task")
    ]
    assert (TURN_TASK, [accepted.turn_id]) in sent
    assert sent.count((TURN_TASK, [accepted.turn_id])) == 1
    with store.transaction() as session:
        job = session.scalars(select(OutboxMessage).where(OutboxMessage.turn_id == accepted.turn_id)).one()
        assert (job.status, job.attempts) == ("sent", 1)
        assert job.sent_at is not None
    client.flushdb()
    client.close()
