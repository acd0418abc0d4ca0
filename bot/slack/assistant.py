"""Slack's agents and AI apps surface (SPEC §8): the assistant thread, through slack-bolt's `Assistant` middleware.

`assistant_thread_started`: the conversation is stored as an assistant thread (its `reference` says so, with the
user and team a streamed answer goes to and the channel the user was viewing), then a greeting and up to four
suggested prompts built from the databases this user may query, resolved from the directory as a turn resolves
them; a database the user may not query is never named. `assistant_thread_context_changed`: the channel the user
now views replaces the stored one (bolt's thread context, kept in the metadata store rather than in message
metadata). A user's message in the thread is a turn like a direct message (private, the thread is the
conversation); the first question of the thread becomes its title (`assistant.threads.setTitle`).

Bolt's `Assistant` also takes every other direct-message thread reply (it cannot tell an assistant thread from a
DM thread); those go to the ordinary message listener unchanged, so DM threads behave as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from slack_bolt import BoltContext
from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.store import AssistantThreadContextStore
from slack_bolt.context.say import Say
from slack_bolt.context.set_suggested_prompts import SetSuggestedPrompts
from slack_bolt.middleware.assistant import Assistant
from sqlalchemy import func, select

from bot.slack.web import ASSISTANT
from core.config_file import ConfigFile
from core.permissions import resolve_principal
from core.storable_text import storable
from core.store.database import Store
from core.store.models import Conversation, Turn
from core.store.repositories import search_queries
from core.store.repositories import turns as turn_repo

log = logging.getLogger(__name__)

#: The events the assistant surface handles (the manifest subscribes to them, with message.im).
ASSISTANT_EVENTS = ("assistant_thread_started", "assistant_thread_context_changed")
PROMPTS_TITLE = "Try asking"
MAX_PROMPTS = 4
TITLE_LIMIT = 80
GREETING = (
    "Hi! Ask me a business question and I will find the right tables, run read-only SQL and show you the answer "
    "with the SQL. I can query {databases}. This conversation is private to you."
)
NO_DATABASES = (
    "Hi! You may not query any database yet, so I cannot answer questions for you. "
    "Ask whoever runs tablescout to give your Slack group a role."
)

MessageListener = Callable[[dict[str, Any], dict[str, Any], BoltContext], None]


def is_assistant_thread(store: Store, team: str, channel: str, thread: str) -> bool:
    """Whether tablescout stored this thread as an assistant thread when it started."""
    with store.transaction() as session:
        reference = session.scalar(
            select(Conversation.reference).where(
                Conversation.platform == "slack",
                Conversation.workspace_id == storable(team),
                Conversation.channel_id == storable(channel),
                Conversation.thread_id == storable(thread),
            )
        )
    return isinstance(reference, dict) and reference.get("surface") == ASSISTANT


def remember_thread(
    store: Store, *, team: str, channel: str, thread: str, user: str, context: Mapping[str, Any] | None
) -> None:
    """Store the assistant thread as a private conversation whose reference marks the surface."""
    reference: dict[str, Any] = {"surface": ASSISTANT, "user_id": storable(user), "team_id": storable(team)}
    if context:
        reference["context"] = {str(k): storable(str(v)) for k, v in context.items() if v}
    with store.transaction() as session:
        turn_repo.conversation(
            session,
            platform="slack",
            workspace_id=storable(team),
            channel_id=storable(channel),
            thread_id=storable(thread),
            private=True,
            reference=reference,
        )


class StoredThreadContext(AssistantThreadContextStore):
    """Bolt's thread context (the channel the user is viewing) kept on the assistant thread's conversation row."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        with self.store.transaction() as session:
            found = session.scalars(
                select(Conversation).where(
                    Conversation.platform == "slack",
                    Conversation.channel_id == storable(channel_id),
                    Conversation.thread_id == storable(thread_ts),
                )
            ).first()
            if found is None or (found.reference or {}).get("surface") != ASSISTANT:
                return  # a thread started before tablescout knew it: nothing to attach the context to
            cleaned = {str(k): storable(str(v)) for k, v in context.items() if v}
            found.reference = {**(found.reference or {}), "context": cleaned}

    def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        with self.store.transaction() as session:
            reference = session.scalar(
                select(Conversation.reference).where(
                    Conversation.platform == "slack",
                    Conversation.channel_id == storable(channel_id),
                    Conversation.thread_id == storable(thread_ts),
                )
            )
        context = (reference or {}).get("context")
        return AssistantThreadContext(dict(context)) if isinstance(context, dict) and context else None


def permitted_databases(store: Store, config: ConfigFile, user_id: str) -> list[tuple[str, str | None]]:
    """(name, summary) of each registered database `user_id` may query, by name."""
    with store.transaction() as session:
        principal = resolve_principal(session, config, "slack", user_id)
        sources = search_queries.sources(session)
        return sorted((s.name, s.summary) for s in sources if principal.may_see(s.name))


def suggested_prompts(databases: list[tuple[str, str | None]]) -> list[dict[str, str]]:
    """Up to `MAX_PROMPTS` prompts, each naming one of `databases` (pinned with @name) or none."""
    prompts = [
        {
            "title": f"What is in {name}?",
            "message": f"@{name} What business data is in {name}, and which tables matter most?",
        }
        for name, _ in databases[: MAX_PROMPTS - 1]
    ]
    if databases:
        name = databases[0][0]
        prompts.append(
            {"title": f"Biggest tables in {name}", "message": f"@{name} Which tables in {name} hold the most rows?"}
        )
    return prompts[:MAX_PROMPTS]


def greeting(databases: list[tuple[str, str | None]]) -> str:
    if not databases:
        return NO_DATABASES
    names = [name for name, _ in databases]
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    return GREETING.format(databases=listed)


def thread_title(question: str) -> str:
    text = " ".join(question.split())
    return text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1].rstrip() + "…"


def first_question(store: Store, turn_id: int) -> str | None:
    """The turn's question when it is the first of its conversation (the thread's title), else None."""
    with store.transaction() as session:
        turn = session.get(Turn, turn_id)
        if turn is None:
            return None
        count = session.scalar(select(func.count()).where(Turn.conversation_id == turn.conversation_id))
        return turn.question if count == 1 else None


def assistant_middleware(
    store: Store,
    config: Callable[[], ConfigFile],
    *,
    on_message: MessageListener,
    on_question: Callable[[dict[str, Any], dict[str, Any], BoltContext], None],
) -> Assistant:
    """The `Assistant` for this app: thread started (greeting, prompts), context changed, messages in the thread.

    `on_message` is the ordinary message listener (DM threads that are not assistant threads); `on_question`
    stores a message of an assistant thread as a turn."""
    assistant = Assistant(thread_context_store=StoredThreadContext(store), logger=logging.getLogger("tablescout.slack"))

    @assistant.thread_started
    def started(
        body: dict[str, Any], payload: dict[str, Any], say: Say, set_suggested_prompts: SetSuggestedPrompts
    ) -> None:
        thread = payload.get("assistant_thread") or {}
        team = str(body.get("team_id") or "")
        user = str(thread.get("user_id") or payload.get("user") or "")
        channel = str(thread.get("channel_id") or "")
        thread_ts = str(thread.get("thread_ts") or "")
        if not user or not channel or not thread_ts:
            log.warning("assistant_thread_started without user, channel or thread; ignored")
            return
        remember_thread(store, team=team, channel=channel, thread=thread_ts, user=user, context=thread.get("context"))
        databases = permitted_databases(store, config(), user)
        say(greeting(databases))
        prompts = suggested_prompts(databases)
        if prompts:
            set_suggested_prompts(prompts=prompts, title=PROMPTS_TITLE)

    @assistant.user_message
    def message(body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        team = str(body.get("team_id") or event.get("team") or "")
        channel = str(event.get("channel") or "")
        if is_assistant_thread(store, team, channel, str(event.get("thread_ts") or "")):
            on_question(body, event, context)
        else:
            on_message(body, event, context)

    return assistant
