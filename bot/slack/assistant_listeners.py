"""The Slack agents and AI apps surface on bolt's `Assistant` middleware: its listeners (thread started, context
changed, a message in the thread) and the thread context store it keeps the viewed channel in. What the surface
says and stores is bot/slack/assistant.py, which has no SDK.

Bolt's `Assistant` also takes every other direct-message thread reply (it cannot tell an assistant thread from a DM
thread); those go to the ordinary message listener unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from slack_bolt import BoltContext
from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.store import AssistantThreadContextStore
from slack_bolt.context.say import Say
from slack_bolt.context.set_suggested_prompts import SetSuggestedPrompts
from slack_bolt.middleware.assistant import Assistant

from bot.slack.assistant import (
    PROMPTS_TITLE,
    greeting,
    is_assistant_thread,
    permitted_databases,
    questions_to_suggest,
    remember_thread,
    suggested_prompts,
    thread_owner,
    viewed_channel_id,
)
from bot.slack.web import ASSISTANT
from core.config.file import ConfigFile
from core.store.database import Store
from core.store.repositories import conversations
from core.text.storable_text import storable

log = logging.getLogger(__name__)

MessageListener = Callable[[dict[str, Any], dict[str, Any], BoltContext], None]


class StoredThreadContext(AssistantThreadContextStore):
    """Bolt's thread context (the channel the user is viewing) kept on the assistant thread's conversation row."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        with self.store.transaction() as session:
            found = conversations.in_thread(
                session, platform="slack", channel_id=storable(channel_id), thread_id=storable(thread_ts)
            )
            if found is None or (found.reference or {}).get("surface") != ASSISTANT:
                return  # a thread started before tablescout knew it: nothing to attach the context to
            cleaned = {str(k): storable(str(v)) for k, v in context.items() if v}
            found.reference = {**(found.reference or {}), "context": cleaned}

    def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        with self.store.transaction() as session:
            reference = conversations.reference_in_thread(
                session, platform="slack", channel_id=storable(channel_id), thread_id=storable(thread_ts)
            )
        context = (reference or {}).get("context")
        return AssistantThreadContext(dict(context)) if isinstance(context, dict) and context else None


def assistant_middleware(
    store: Store,
    config: Callable[[], ConfigFile],
    *,
    on_message: MessageListener,
    on_question: MessageListener,
) -> Assistant:
    """The `Assistant` for this app: thread started (greeting, prompts), context changed, messages in the thread.

    `on_message` is the ordinary message listener (DM threads that are not assistant threads); `on_question`
    stores a message of an assistant thread as a turn."""
    contexts = StoredThreadContext(store)
    assistant = Assistant(thread_context_store=contexts, logger=logging.getLogger("tablescout.slack"))

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
        context = thread.get("context")
        remember_thread(store, team=team, channel=channel, thread=thread_ts, user=user, context=context)
        databases, viewed = permitted_databases(store, config(), user, team=team, viewing=viewed_channel_id(context))
        say(greeting(databases, viewed))
        prompts = suggested_prompts(databases, questions_to_suggest(store, config(), user, databases))
        if prompts:
            set_suggested_prompts(prompts=prompts, title=PROMPTS_TITLE)

    @assistant.thread_context_changed
    def context_changed(
        body: dict[str, Any], payload: dict[str, Any], set_suggested_prompts: SetSuggestedPrompts
    ) -> None:
        """The user now views another channel: kept for the thread's questions (only the thread's own user's
        context counts), and before the first question the prompts follow it."""
        thread = payload.get("assistant_thread") or {}
        team = str(body.get("team_id") or "")
        channel, thread_ts = str(thread.get("channel_id") or ""), str(thread.get("thread_ts") or "")
        user, context = str(thread.get("user_id") or ""), thread.get("context")
        owner, asked = thread_owner(store, team, channel, thread_ts)
        if owner is None or owner != user or not isinstance(context, dict):
            log.info("assistant thread context from someone other than the thread's user (or none); ignored")
            return
        contexts.save(channel_id=channel, thread_ts=thread_ts, context=context)
        if asked:
            return
        databases, _ = permitted_databases(store, config(), user, team=team, viewing=viewed_channel_id(context))
        prompts = suggested_prompts(databases, questions_to_suggest(store, config(), user, databases))
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
