"""The Slack events that become stored turns (registered on the bolt app by bot/slack/app.py): `app_mention` in
channels (answered in the thread), `message.im` (direct messages, private), messages in a channel thread the bot
already answers in (follow-ups, same conversation), "remember this: …" in any of those, the "Remember this" message
shortcut (callback id `remember_this`), which saves the message it was used on, and a user's message in an assistant
thread (private; the thread's first question titles it).

Each listener turns the event into an `IncomingMessage` and stores it with its job in one transaction
(bot/intake.py); bolt acknowledges Slack only after the listener returns, so a failure to store answers 500 and Slack
delivers the event again, and a redelivery of a stored event finds its `event_id` and does nothing. Replies that
need no turn (a mention with no question), the thread title and the relay kick happen after the store commits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any

from slack_bolt import Ack, BoltContext

from bot.intake import Accepted, IncomingMessage, accept
from bot.slack.assistant import first_question, thread_title
from bot.slack.client import SlackDeliveryError
from bot.slack.web import SlackPoster
from core.config.file import ConfigFile
from core.store.database import Store
from core.store.repositories import turns as turn_repo
from core.text.storable_text import storable

log = logging.getLogger(__name__)

REMEMBER_SHORTCUT = "remember_this"
#: Message subtypes that are a person writing; every other subtype (edits, joins, bot posts) is ignored.
HUMAN_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})


class SlackEvents:
    """The listeners of message events and the shortcut; `on_stored` is called after each newly stored turn (the
    relay kick), and `background` runs replies and titles after the store commits."""

    def __init__(
        self,
        store: Store,
        poster: SlackPoster,
        *,
        on_stored: Callable[[int], None],
        background: Executor,
        config: Callable[[], ConfigFile] | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.poster = poster
        self.on_stored = on_stored
        self.background = background

    def on_mention(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        if event.get("bot_id") or not event.get("user"):
            return
        ts = str(event.get("ts") or "")
        message = IncomingMessage(
            platform="slack",
            event_id=str(body.get("event_id") or f"{event.get('channel')}:{ts}"),
            workspace_id=_team(body, event),
            channel_id=str(event.get("channel") or ""),
            thread_id=str(event.get("thread_ts") or ts),
            user_id=str(event["user"]),
            text=str(event.get("text") or ""),
            private=False,
            bot_user_id=context.bot_user_id,
        )
        self._store(message)

    def on_message(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        if event.get("subtype") not in HUMAN_SUBTYPES or event.get("bot_id") or not event.get("user"):
            return
        channel_type = event.get("channel_type")
        text = str(event.get("text") or "")
        ts = str(event.get("ts") or "")
        thread_ts = event.get("thread_ts")
        if channel_type == "im":
            # A direct message: the whole DM is one conversation, answered at top level; a DM thread is its own.
            thread = str(thread_ts or "")
            private = True
        elif thread_ts and thread_ts != ts:
            # A reply in a channel thread: a follow-up only where the bot already converses, and not a mention
            # (app_mention delivers those, under a different event id).
            if context.bot_user_id and f"<@{context.bot_user_id}>" in text:
                return
            if not self._known_thread(_team(body, event), str(event.get("channel") or ""), str(thread_ts)):
                return
            thread = str(thread_ts)
            private = False
        else:
            return
        message = IncomingMessage(
            platform="slack",
            event_id=str(body.get("event_id") or f"{event.get('channel')}:{ts}"),
            workspace_id=_team(body, event),
            channel_id=str(event.get("channel") or ""),
            thread_id=thread,
            user_id=str(event["user"]),
            text=text,
            private=private,
            bot_user_id=context.bot_user_id,
        )
        self._store(message)

    def on_assistant_question(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        """A message in an assistant thread: a private turn in that thread; the first one titles the thread."""
        if event.get("subtype") not in HUMAN_SUBTYPES or event.get("bot_id") or not event.get("user"):
            return
        ts = str(event.get("ts") or "")
        message = IncomingMessage(
            platform="slack",
            event_id=str(body.get("event_id") or f"{event.get('channel')}:{ts}"),
            workspace_id=_team(body, event),
            channel_id=str(event.get("channel") or ""),
            thread_id=str(event.get("thread_ts") or ""),
            user_id=str(event["user"]),
            text=str(event.get("text") or ""),
            private=True,
            bot_user_id=context.bot_user_id,
        )
        accepted = self._store(message)
        if accepted.turn_id is not None and not accepted.duplicate:
            self.background.submit(self._title, message, accepted.turn_id)

    def _title(self, message: IncomingMessage, turn_id: int) -> None:
        try:
            question = first_question(self.store, turn_id)
            if question:
                self.poster.set_thread_title(message.channel_id, message.thread_id, thread_title(question))
        except SlackDeliveryError as exc:
            log.warning("could not title assistant thread in %s: %s", message.channel_id, exc)
        except Exception:  # the title is decoration: the turn runs regardless
            log.exception("could not title assistant thread in %s", message.channel_id)

    def on_remember_shortcut(self, ack: Ack, body: dict[str, Any]) -> None:
        ack()
        shared = body.get("message") or {}
        channel = str((body.get("channel") or {}).get("id") or "")
        user = str((body.get("user") or {}).get("id") or "")
        ts = str(shared.get("ts") or "")
        if not channel or not user or not ts:
            log.warning("Remember-this shortcut without channel, user or message; ignored")
            return
        team = str((body.get("team") or {}).get("id") or "")
        private = channel.startswith("D")
        message = IncomingMessage(
            platform="slack",
            # Using the shortcut twice on one message saves one note.
            event_id=f"shortcut:{team}:{channel}:{ts}:{user}",
            workspace_id=team,
            channel_id=channel,
            thread_id=str(shared.get("thread_ts") or ("" if private else ts)),
            user_id=user,
            text=str(shared.get("text") or ""),
            private=private,
            remember=True,
        )
        self._store(message)

    def _known_thread(self, team: str, channel: str, thread: str) -> bool:
        with self.store.transaction() as session:
            return turn_repo.conversation_exists(
                session,
                platform="slack",
                workspace_id=storable(team),
                channel_id=storable(channel),
                thread_id=storable(thread),
            )

    def _store(self, message: IncomingMessage) -> Accepted:
        with self.store.transaction() as session:
            accepted = accept(session, message, self.config() if self.config is not None else None)
        if accepted.duplicate:
            log.info("Slack event %s delivered again; already stored", message.event_id)
        elif accepted.turn_id is not None:
            self.on_stored(accepted.turn_id)
        elif accepted.reply:
            self.background.submit(self._reply, message, accepted.reply)
        return accepted

    def _reply(self, message: IncomingMessage, text: str) -> None:
        try:
            self.poster.post_text(message.channel_id, message.thread_id or None, text)
        except SlackDeliveryError as exc:
            log.warning("could not reply in Slack channel %s: %s", message.channel_id, exc)


def _team(body: Mapping[str, Any], event: Mapping[str, Any]) -> str:
    return str(body.get("team_id") or event.get("team") or "")
