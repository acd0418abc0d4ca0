"""From a chat event to a stored turn (SPEC §8): deduplicated by event id, stored with its job in one transaction.

An adapter calls `accept` inside the transaction it commits before acknowledging the platform, so a message is
never acknowledged without being stored, and a platform's redelivery of a stored event finds it and does nothing.
A redelivery of an event whose first delivery was never stored (the transaction failed) is processed normally.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from sqlalchemy.orm import Session

from bot import token_commands
from bot.messages import parse_message, too_long
from core.config.file import ConfigFile
from core.store.repositories import outbox, processed_events
from core.store.repositories import sources as source_repo
from core.store.repositories import turns as turn_repo
from core.text.storable_text import storable, storable_value

TURN_TASK = "tablescout.turns.run"
EMPTY_NOTE = 'Say what to remember after "remember this:", for example "remember this: ORD_MST_BAK is a stale copy".'
EMPTY_QUESTION = "Ask me a business question, for example: how many orders shipped to Busan last month?"


@dataclass(frozen=True)
class IncomingMessage:
    """A chat message as an adapter received it; ids are the platform's own."""

    platform: str  # "slack" or "teams"
    event_id: str  # Slack event_id, Teams activity id: the deduplication key
    workspace_id: str
    channel_id: str
    thread_id: str  # the thread the answer goes to (Slack thread_ts, else the message ts)
    user_id: str
    text: str
    private: bool  # a direct message: the conversation is the user's alone
    bot_user_id: str | None = None
    bot_name: str | None = None
    reference: dict[str, Any] | None = None  # what the adapter needs to reply later (Teams conversation reference)
    remember: bool = False  # the "Remember this" message shortcut: the whole text is the note


@dataclass(frozen=True)
class Accepted:
    turn_id: int | None
    duplicate: bool = False
    reply: str | None = None  # an immediate answer when the message needs no turn (nothing to ask or remember)


def storable_message(message: IncomingMessage) -> IncomingMessage:
    """The message with every text in it storable (core.text.storable_text): a NUL character or an unpaired surrogate
    in what a user wrote must not make the store refuse, and so lose, the whole message."""
    changes: dict[str, Any] = {}
    for item in fields(message):
        value = getattr(message, item.name)
        cleaned = storable(value) if isinstance(value, str) else storable_value(value)
        if cleaned != value:
            changes[item.name] = cleaned
    return replace(message, **changes) if changes else message


def accept(session: Session, message: IncomingMessage, config: ConfigFile | None = None) -> Accepted:
    """Store the message as a turn and its job (or recognise a redelivery); the caller commits, then acknowledges.

    A token command (`bot.token_commands`) is answered at once with no turn, so the token it may make is stored
    nowhere but in the reply; `config` is the configuration in use, which says who is an admin."""
    message = storable_message(message)
    if not processed_events.first_seen(session, message.platform, message.event_id):
        earlier = processed_events.turn_of(session, message.platform, message.event_id)
        return Accepted(turn_id=earlier, duplicate=True)
    parsed = parse_message(
        message.text, labels=source_repo.labels(session), bot_user_id=message.bot_user_id, bot_name=message.bot_name
    )
    remember = parsed.remember or message.remember
    command = None if remember else token_commands.parse(parsed.text)
    if command is not None:
        asker = token_commands.Asker(message.platform, message.user_id, message.private)
        return Accepted(turn_id=None, reply=token_commands.answer(session, config, asker, command))
    if remember:
        knowledge = parsed.note_text if parsed.remember else parsed.text
        if not knowledge or not knowledge.strip():
            return Accepted(turn_id=None, reply=EMPTY_NOTE)
        question = knowledge.strip()
    else:
        question = parsed.text.strip()
        if not question:
            return Accepted(turn_id=None, reply=EMPTY_QUESTION)
    refusal = too_long(question)
    if refusal is not None:
        return Accepted(turn_id=None, reply=refusal)
    conversation = turn_repo.conversation(
        session,
        platform=message.platform,
        workspace_id=message.workspace_id,
        channel_id=message.channel_id,
        thread_id=message.thread_id,
        private=message.private,
        reference=message.reference,
    )
    turn = turn_repo.create_turn(
        session,
        conversation.id,
        user_platform=message.platform,
        user_id=message.user_id,
        question=question,
        pins=parsed.pins,
        intent="note" if remember else "question",
    )
    outbox.queue_job(session, turn.id, {"task": TURN_TASK, "turn_id": turn.id})
    processed_events.link_turn(session, message.platform, message.event_id, turn.id)
    return Accepted(turn_id=turn.id)
