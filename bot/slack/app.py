"""The Slack inbound side (SPEC §8): a slack-bolt app that turns events into stored turns. The one module that
imports `slack_bolt`.

Handled: `app_mention` in channels (answered in the thread), `message.im` (direct messages, private), messages in
a channel thread the bot already answers in (follow-ups, same conversation), "remember this: …" in any of those,
and the "Remember this" message shortcut (callback id `remember_this`), which saves the message it was used on.
The 👍/👎 buttons under answers and the modal a 👎 opens are handled by bot/slack/feedback_actions.py; the
Approve / Reject buttons an admin gets for a proposed verified example by bot/slack/example_review.py.
The agents and AI apps surface (assistant threads: greeting, suggested prompts, the viewed channel as context,
the thread title) is bot/slack/assistant.py, on bolt's `Assistant` middleware; its answers stream (bot/delivery.py).

Bolt runs with `process_before_response`: the signature (and its timestamp, refused when more than five minutes
old) is checked first, then the body's shape (bot/slack/request_checks.py: a signed body Slack would never send is
answered 400 with the reason, and a Socket Mode envelope of that kind is acknowledged and logged; neither is
stored), then the listener stores the turn and its job in one transaction, and only then does Slack get its 200. A
failure to store answers 500, so Slack delivers the event again; a redelivery (`X-Slack-Retry-Num`) of a stored
event finds its `event_id` and does nothing. Replies that need no turn (a mention with no question) and the relay
kick happen after the store commits.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from slack_bolt import Ack, App, BoltContext, BoltRequest
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.store import AssistantThreadContextStore
from slack_bolt.context.say import Say
from slack_bolt.context.set_suggested_prompts import SetSuggestedPrompts
from slack_bolt.middleware.assistant import Assistant

from bot.feedback import question_embedder
from bot.intake import Accepted, IncomingMessage, accept
from bot.json_shape import MalformedBody
from bot.slack.assistant import (
    PROMPTS_TITLE,
    first_question,
    greeting,
    is_assistant_thread,
    permitted_databases,
    remember_thread,
    suggested_prompts,
    thread_owner,
    thread_title,
    viewed_channel_id,
)
from bot.slack.blocks import EXAMPLE_APPROVE, EXAMPLE_REJECT, FEEDBACK_ACTION, FEEDBACK_REASON_VIEW
from bot.slack.example_review import ExampleReview
from bot.slack.feedback_actions import FeedbackActions
from bot.slack.request_checks import check_payload, header, signature_valid, slack_body
from bot.slack.web import ASSISTANT, SlackDeliveryError, SlackPoster, web_client
from core.config.file import ConfigFile
from core.config.settings import Settings
from core.errors import ConfigError
from core.store.database import Store
from core.store.repositories import conversations
from core.store.repositories import turns as turn_repo
from core.text.storable_text import storable

log = logging.getLogger(__name__)

REMEMBER_SHORTCUT = "remember_this"
#: Message subtypes that are a person writing; every other subtype (edits, joins, bot posts) is ignored.
HUMAN_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})


@dataclass(frozen=True)
class HttpReply:
    status: int
    headers: dict[str, Sequence[str]]
    body: str


class SlackInbound:
    """Slack events in, stored turns out; `on_stored` is called after each newly stored turn (the relay kick)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        on_stored: Callable[[int], None],
        background: Executor,
        socket_mode: bool = False,
    ) -> None:
        token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
        secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
        if not token:
            raise ConfigError("Slack needs SLACK_BOT_TOKEN (the bot's xoxb- token)")
        if socket_mode and not settings.slack_app_token:
            raise ConfigError("Socket Mode needs SLACK_APP_TOKEN (an app-level xapp- token with connections:write)")
        if not socket_mode and not secret:
            raise ConfigError("Slack over HTTP needs SLACK_SIGNING_SECRET to verify that requests come from Slack")
        self.store = store
        self.on_stored = on_stored
        self.background = background
        self._secret = secret
        self.poster = SlackPoster(token, settings.slack_api_url)
        self.app_token = settings.slack_app_token.get_secret_value() if settings.slack_app_token else ""
        try:
            self.app = App(
                signing_secret=secret or None,
                client=web_client(token, settings.slack_api_url),
                process_before_response=True,
                request_verification_enabled=not socket_mode,
                logger=logging.getLogger("tablescout.slack"),
            )
        except Exception as exc:  # bolt checks the token with auth.test and raises its own error types
            raise ConfigError(f"Slack refused the bot token or could not be reached: {exc}") from exc
        self.app.assistant(
            assistant_middleware(
                store, lambda: settings.file, on_message=self._on_message, on_question=self._on_assistant_question
            )
        )
        self.app.event("app_mention")(self._on_mention)
        self.app.event("message")(self._on_message)
        self.app.shortcut(REMEMBER_SHORTCUT)(self._on_remember_shortcut)
        review = ExampleReview(store, lambda: settings.file, self.poster, question_embedder(settings), background)
        feedback = FeedbackActions(store, on_proposed=review.proposed)
        self.app.action(FEEDBACK_ACTION)(feedback.on_click)
        self.app.view(FEEDBACK_REASON_VIEW)(feedback.on_reason)
        self.app.action(EXAMPLE_APPROVE)(review.on_click)
        self.app.action(EXAMPLE_REJECT)(review.on_click)

    # --- HTTP and Socket Mode ---------------------------------------------------------------------------------------

    def handle_http(self, raw: bytes, query: str, headers: Mapping[str, Sequence[str]]) -> HttpReply:
        """One request to /slack/events, in a worker thread (it touches the store).

        The signature is checked on the bytes as they came (401 when it is wrong or stale), then the body's shape
        (bot/slack/request_checks.py): a signed body that is not one Slack sends is answered 400 with the reason and
        logged, and nothing is stored. Otherwise bolt dispatches it; a listener that fails to store answers 500, so
        Slack delivers the event again."""
        if not signature_valid(self._secret, raw, headers):
            log.info("refused a Slack request whose signature is missing, wrong or over five minutes old")
            return _json_reply(401, {"error": "invalid request"})
        content_type = header(headers, "content-type")
        try:
            body = slack_body(raw, content_type)
            request = BoltRequest(body=body, query=query, headers={k: list(v) for k, v in headers.items()})
        except MalformedBody as exc:
            return _refused(str(exc), raw, content_type)
        except Exception as exc:  # bolt reads a field of a shape request_checks does not check
            return _refused(f"a field has a shape Slack does not send ({type(exc).__name__})", raw, content_type)
        response = self.app.dispatch(request)
        return HttpReply(response.status, dict(response.headers), response.body)

    def socket_mode(self) -> SocketModeHandler:
        """A Socket Mode connection for this app (SLACK_APP_TOKEN); `.connect()` starts it, `.close()` ends it."""
        if not self.app_token:
            raise ConfigError("Socket Mode needs SLACK_APP_TOKEN (an app-level xapp- token with connections:write)")
        return CheckedSocketModeHandler(self.app, self.app_token)

    # --- listeners --------------------------------------------------------------------------------------------------

    def _on_mention(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
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

    def _on_message(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
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

    def _on_assistant_question(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
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

    def _on_remember_shortcut(self, ack: Ack, body: dict[str, Any]) -> None:
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

    # --- storing ----------------------------------------------------------------------------------------------------

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
            accepted = accept(session, message)
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


class CheckedSocketModeHandler(SocketModeHandler):
    """bolt's Socket Mode handler, with each Events API and interactive envelope's payload checked first
    (bot/slack/request_checks.py): one Slack would never send is acknowledged, so it is not delivered again, and
    logged; nothing is stored."""

    def handle(self, client: Any, req: Any) -> None:
        if req.type in ("events_api", "interactive"):
            try:
                check_payload(req.payload)
            except MalformedBody as exc:
                log.warning("refused a Slack Socket Mode %s envelope %s: %s", req.type, req.envelope_id, exc)
                client.send_socket_mode_response({"envelope_id": req.envelope_id})
                return
        super().handle(client, req)


def _json_reply(status: int, body: Mapping[str, str]) -> HttpReply:
    return HttpReply(status, {"content-type": ["application/json"]}, json.dumps(body))


def _refused(reason: str, raw: bytes, content_type: str | None) -> HttpReply:
    log.warning(
        "refused a signed Slack request (%d bytes, %s): %s", len(raw), content_type or "no content type", reason
    )
    return _json_reply(400, {"error": f"not a request Slack sends: {reason}"})


def _team(body: Mapping[str, Any], event: Mapping[str, Any]) -> str:
    return str(body.get("team_id") or event.get("team") or "")


# --- the assistant surface (bot/slack/assistant.py holds what it says and stores) ------------------------------

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
        prompts = suggested_prompts(databases)
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
