"""Slack's agents and AI apps surface (SPEC §8): the assistant thread, without the SDK (bot/slack/assistant_listeners.py
wires this into bolt's `Assistant` middleware).

`assistant_thread_started`: the conversation is stored as an assistant thread (its `reference` says so, with the
user and team a streamed answer goes to and the channel the user was viewing), then a greeting and up to four
suggested prompts built from the databases this user may query, resolved from the directory as a turn resolves
them; a database the user may not query is never named. `assistant_thread_context_changed`: the channel the user
now views replaces the stored one (bolt's thread context, kept in the metadata store rather than in message
metadata), when the event is the thread's own user's; before the first question the prompts follow it. A user's
message in the thread is a turn like a direct message (private, the thread is the conversation); the first
question of the thread becomes its title (`assistant.threads.setTitle`).

The viewed channel matters as its default database does: the databases that channel's questions use
(core/store/repositories/channel_usage.py) come first in the prompts, the greeting says it looks there first, and
the thread's questions prefer them (workers/turns/first_input.py). Only the channel Slack sent for this user counts,
and only databases the user may query are named.

Bolt's `Assistant` also takes every other direct-message thread reply (it cannot tell an assistant thread from a
DM thread); those go to the ordinary message listener unchanged, so DM threads behave as before.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from bot.slack.web import ASSISTANT
from core.access.permissions import Principal, resolve_principal
from core.cards.database_summary import summaries_for
from core.config.file import ConfigFile
from core.store.database import Store
from core.store.models import Turn
from core.store.repositories import channel_usage, conversations, feedback, search_queries
from core.store.repositories import turns as turn_repo
from core.text.storable_text import storable

log = logging.getLogger(__name__)

#: The events the assistant surface handles (the manifest subscribes to them, with message.im).
ASSISTANT_EVENTS = ("assistant_thread_started", "assistant_thread_context_changed")
PROMPTS_TITLE = "Try asking"
MAX_PROMPTS = 4
TITLE_LIMIT = 80
PROMPT_TITLE_LIMIT = 60
QUESTIONS_PER_DATABASE = 2
GREETING = (
    "Hi! Ask me a business question and I will find the right tables, run read-only SQL and show you the answer "
    "with the SQL. I can query {databases}. This conversation is private to you."
)
VIEWED = " Questions in the channel you are viewing use {databases}, so I look there first."
NO_DATABASES = (
    "Hi! You may not query any database yet, so I cannot answer questions for you. "
    "Ask whoever runs tablescout to give your Slack group a role."
)


def is_assistant_thread(store: Store, team: str, channel: str, thread: str) -> bool:
    """Whether tablescout stored this thread as an assistant thread when it started."""
    with store.transaction() as session:
        reference = conversations.reference_in_thread(
            session,
            platform="slack",
            workspace_id=storable(team),
            channel_id=storable(channel),
            thread_id=storable(thread),
        )
    return reference is not None and reference.get("surface") == ASSISTANT


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


def permitted_databases(
    store: Store, config: ConfigFile, user_id: str, *, team: str = "", viewing: str | None = None
) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(name, summary) of each registered database `user_id` may query, those the questions of channel `viewing`
    use first (then by name), and those channel databases."""
    with store.transaction() as session:
        principal = resolve_principal(session, config, "slack", user_id)
        sources = search_queries.sources(session)
        summaries = summaries_for(session, principal, sources)
        databases = sorted((s.name, summaries.get(s.name)) for s in sources if principal.may_see(s.name))
        used = (
            channel_usage.databases_asked_about(session, platform="slack", workspace_id=team, channel_id=viewing)
            if viewing
            else []
        )
    allowed = {name for name, _ in databases}
    viewed = [name for name in used if name in allowed][: MAX_PROMPTS - 1]
    rank = {name: index for index, name in enumerate(viewed)}
    databases.sort(key=lambda d: (rank.get(d[0], len(rank)), d[0]))
    return databases, viewed


def viewed_channel_id(context: Mapping[str, Any] | None) -> str | None:
    """The channel id in a thread context Slack sent (None when it sent none)."""
    channel = (context or {}).get("channel_id")
    return str(channel) if channel else None


def questions_to_suggest(
    store: Store, config: ConfigFile, user_id: str, databases: list[tuple[str, str | None]]
) -> list[tuple[str, str]]:
    """(database, question) of the approved verified examples on `databases` whose tables the user may all see,
    newest first: questions people ask, for the prompts."""
    allowed = {name for name, _ in databases}
    found: list[tuple[str, str]] = []
    with store.transaction() as session:
        principal = resolve_principal(session, config, "slack", user_id)
        for example in reversed(feedback.examples(session, "approved")):
            tables = [f"{example.database}.{t}" for t in example.tables]
            if example.database in allowed and all(_visible(principal, t) for t in tables):
                found.append((example.database, " ".join(example.question.split())))
    return list(dict.fromkeys(found))


def _visible(principal: Principal, qualified: str) -> bool:
    """Whether the user may see table `database.[schema.]table`."""
    database, _, table = qualified.partition(".")
    schema, _, name = table.rpartition(".")
    return bool(name) and principal.may_see(database, name, schema or None)


def suggested_prompts(
    databases: list[tuple[str, str | None]], questions: Sequence[tuple[str, str]] = ()
) -> list[dict[str, str]]:
    """Up to `MAX_PROMPTS` prompts, database by database in `databases`' order: the questions people ask of it
    (`questions_to_suggest`, at most `QUESTIONS_PER_DATABASE`), then what it holds (pinned with @name)."""
    prompts: list[dict[str, str]] = []
    for name, _ in databases:
        asked = [q for database, q in questions if database == name][:QUESTIONS_PER_DATABASE]
        prompts += [{"title": thread_title(q, PROMPT_TITLE_LIMIT), "message": q} for q in asked]
        about = f"@{name} What business data is in {name}, and which tables matter most?"
        prompts.append({"title": f"What is in {name}?", "message": about})
    if databases:
        name = databases[0][0]
        prompts.append(
            {"title": f"Biggest tables in {name}", "message": f"@{name} Which tables in {name} hold the most rows?"}
        )
    return prompts[:MAX_PROMPTS]


def greeting(databases: list[tuple[str, str | None]], viewed: list[str] | None = None) -> str:
    if not databases:
        return NO_DATABASES
    text = GREETING.format(databases=_listed(sorted(name for name, _ in databases)))
    return text + VIEWED.format(databases=_listed(viewed)) if viewed else text


def _listed(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def thread_owner(store: Store, team: str, channel: str, thread: str) -> tuple[str | None, bool]:
    """The user an assistant thread was started for, and whether a question was asked in it yet."""
    with store.transaction() as session:
        found = conversations.in_thread(
            session,
            platform="slack",
            workspace_id=storable(team),
            channel_id=storable(channel),
            thread_id=storable(thread),
        )
        reference = found.reference if found is not None else None
        if found is None or not isinstance(reference, dict) or reference.get("surface") != ASSISTANT:
            return None, False
        asked = conversations.turn_count(session, found.id)
    return str(reference.get("user_id") or "") or None, bool(asked)


def thread_title(question: str, limit: int = TITLE_LIMIT) -> str:
    text = " ".join(question.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def first_question(store: Store, turn_id: int) -> str | None:
    """The turn's question when it is the first of its conversation (the thread's title), else None."""
    with store.transaction() as session:
        turn = session.get(Turn, turn_id)
        if turn is None:
            return None
        return turn.question if conversations.turn_count(session, turn.conversation_id) == 1 else None
