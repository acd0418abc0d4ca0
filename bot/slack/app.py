"""The Slack inbound side (SPEC §8): the slack-bolt app that turns Slack's requests into stored turns, over HTTP
(`/slack/events`) or Socket Mode.

`SlackInbound` builds the bolt app and registers every listener: the message events and the "Remember this" shortcut
(bot/slack/events.py), the agents and AI apps surface (assistant threads: greeting, suggested prompts, the viewed
channel as context, the thread title; bot/slack/assistant_listeners.py, on bolt's `Assistant` middleware; its
answers stream, bot/delivery.py), the 👍/👎 buttons under answers and the modal a 👎 opens
(bot/slack/feedback_actions.py), and the Approve / Reject buttons an admin gets for a proposed verified example
(bot/slack/example_review.py).

Bolt runs with `process_before_response`: the signature (and its timestamp, refused when more than five minutes
old) is checked first, then the body's shape (bot/slack/request_checks.py: a signed body Slack would never send is
answered 400 with the reason, and a Socket Mode envelope of that kind is acknowledged and logged, bot/slack/
socket_mode.py; neither is stored), then the listener stores the turn and its job in one transaction, and only then
does Slack get its 200. A failure to store answers 500, so Slack delivers the event again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from slack_bolt import App, BoltRequest

from bot.feedback import question_embedder
from bot.json_shape import MalformedBody
from bot.slack.assistant_listeners import assistant_middleware
from bot.slack.blocks import FEEDBACK_ACTION
from bot.slack.client import web_client
from bot.slack.events import REMEMBER_SHORTCUT, SlackEvents
from bot.slack.example_review import ExampleReview
from bot.slack.feedback_actions import FeedbackActions
from bot.slack.feedback_blocks import EXAMPLE_APPROVE, EXAMPLE_REJECT, FEEDBACK_REASON_VIEW
from bot.slack.request_checks import header, signature_valid, slack_body
from bot.slack.socket_mode import CheckedSocketModeHandler
from bot.slack.web import SlackPoster
from core.config.settings import Settings
from core.errors import ConfigError
from core.store.database import Store

log = logging.getLogger(__name__)


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
        self._listen(
            settings,
            store,
            SlackEvents(store, self.poster, on_stored=on_stored, background=background, config=lambda: settings.file),
        )
        review = ExampleReview(store, lambda: settings.file, self.poster, question_embedder(settings), background)
        feedback = FeedbackActions(store, on_proposed=review.proposed)
        self.app.action(FEEDBACK_ACTION)(feedback.on_click)
        self.app.view(FEEDBACK_REASON_VIEW)(feedback.on_reason)
        self.app.action(EXAMPLE_APPROVE)(review.on_click)
        self.app.action(EXAMPLE_REJECT)(review.on_click)

    def _listen(self, settings: Settings, store: Store, events: SlackEvents) -> None:
        """Register the listeners that store turns: the assistant surface's middleware, the message events and the
        "Remember this" shortcut."""
        self.app.assistant(
            assistant_middleware(
                store, lambda: settings.file, on_message=events.on_message, on_question=events.on_assistant_question
            )
        )
        self.app.event("app_mention")(events.on_mention)
        self.app.event("message")(events.on_message)
        self.app.shortcut(REMEMBER_SHORTCUT)(events.on_remember_shortcut)

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

    def socket_mode(self) -> CheckedSocketModeHandler:
        """A Socket Mode connection for this app (SLACK_APP_TOKEN); `.connect()` starts it, `.close()` ends it."""
        if not self.app_token:
            raise ConfigError("Socket Mode needs SLACK_APP_TOKEN (an app-level xapp- token with connections:write)")
        return CheckedSocketModeHandler(self.app, self.app_token)


def _json_reply(status: int, body: Mapping[str, str]) -> HttpReply:
    return HttpReply(status, {"content-type": ["application/json"]}, json.dumps(body))


def _refused(reason: str, raw: bytes, content_type: str | None) -> HttpReply:
    log.warning(
        "refused a signed Slack request (%d bytes, %s): %s", len(raw), content_type or "no content type", reason
    )
    return _json_reply(400, {"error": f"not a request Slack sends: {reason}"})
