"""The Slack Web API client: posting and updating the status message, replacing it with the answer, uploading
result CSVs, and the read calls directory sync makes (`read_api`). The one module that imports `slack_sdk`.

Every call goes through `slack_sdk.WebClient` with retry handlers: HTTP 429 is retried after the Retry-After the
answer names (up to `RATE_LIMIT_RETRIES` times), a dropped connection once more. A retried delivery never duplicates
the answer: `post_answer` edits the message whose ts the caller stored (the status message, or the answer of an
earlier attempt) instead of posting a new one. Every failure becomes a `SlackDeliveryError` whose message says what
failed and never carries the token.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from bot.slack.blocks import SlackMessage, answer_message, status_message, text_message
from bot.slack.results import result_files
from core.errors import ConfigError, TablescoutError
from core.settings import Settings

DEFAULT_API_URL = "https://slack.com/api/"
RATE_LIMIT_RETRIES = 5
CONNECTION_RETRIES = 1
TIMEOUT_S = 30


class SlackDeliveryError(TablescoutError):
    """A message could not be delivered to Slack.

    `answer_ts` is set when the answer message itself was posted but a later step (the CSV upload) failed: the
    caller stores it and passes it as `status_ts` when it retries, so the retry edits that message instead of
    posting a second answer. `error` is Slack's error code when Slack answered (e.g. "channel_not_found").
    """

    def __init__(self, message: str, *, error: str | None = None, answer_ts: str | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.answer_ts = answer_ts


@dataclass(frozen=True)
class BotIdentity:
    """Who the token belongs to, as auth.test says."""

    user_id: str
    bot_id: str | None
    team_id: str | None


def web_client(token: str, api_url: str | None = None, *, timeout: int = TIMEOUT_S) -> WebClient:
    """A WebClient for `token` that waits out 429s (Retry-After) and retries a dropped connection."""
    base = api_url or DEFAULT_API_URL
    return WebClient(
        token=token,
        base_url=base if base.endswith("/") else base + "/",
        timeout=timeout,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=CONNECTION_RETRIES),
            RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ],
    )


class SlackReadError(TablescoutError):
    """A read call failed: `error` is Slack's error code (None when Slack was not reached or answered no JSON),
    `status` the HTTP status, `data` Slack's answer (never holds the token), `unreachable` when no answer came."""

    def __init__(
        self,
        message: str,
        *,
        error: str | None = None,
        status: int | None = None,
        data: dict[str, Any] | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.error = error
        self.status = status
        self.data = data or {}
        self.unreachable = unreachable


def read_api(token: str, api_url: str | None, method: str, **params: Any) -> dict[str, Any]:
    """One read-only Web API call (e.g. `usergroups.list`), retried on connection errors, 5xx answers and 429s."""
    client = web_client(token, api_url)
    client.retry_handlers.append(ServerErrorRetryHandler(max_retry_count=2))
    try:
        response = client.api_call(method, http_verb="GET", params=params)
    except SlackApiError as exc:
        data = exc.response.data if isinstance(exc.response.data, dict) else {}
        error = str(data.get("error") or f"HTTP {exc.response.status_code}")
        raise SlackReadError(
            f"Slack answered {method} with {error}", error=error, status=exc.response.status_code, data=data
        ) from None
    except (SlackClientError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise SlackReadError(
            f"cannot reach the Slack Web API at {client.base_url}: {reason}", unreachable=True
        ) from None
    except ValueError:
        raise SlackReadError(
            f"the Slack Web API at {client.base_url} answered {method} with something other than JSON"
        ) from None
    if not isinstance(response.data, dict):
        raise SlackReadError(f"the Slack Web API answered {method} with an unexpected body")
    return response.data


class SlackPoster:
    """Posts tablescout's messages to one Slack workspace through its bot token."""

    def __init__(self, token: str, api_url: str | None = None, *, timeout: int = TIMEOUT_S) -> None:
        if not token:
            raise ConfigError("no Slack bot token: set SLACK_BOT_TOKEN")
        self._token = token
        self.client = web_client(token, api_url, timeout=timeout)

    @classmethod
    def from_settings(cls, settings: Settings) -> SlackPoster:
        """The poster for the configured workspace; ConfigError when SLACK_BOT_TOKEN is not set."""
        if settings.slack_bot_token is None:
            raise ConfigError("no Slack bot token: set SLACK_BOT_TOKEN to post answers in Slack")
        return cls(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)

    @property
    def api_url(self) -> str:
        return str(self.client.base_url)

    def bot_identity(self) -> BotIdentity:
        """The bot user behind the token (auth.test); also a check that the token works."""
        with self._calling("auth.test"):
            response = self.client.auth_test()
        return BotIdentity(
            user_id=str(response.get("user_id") or ""),
            bot_id=_optional_str(response.get("bot_id")),
            team_id=_optional_str(response.get("team_id")),
        )

    def post_status(self, channel: str, thread_ts: str | None, text: str) -> str:
        """Post the status message ("Searching tables…") in the thread; returns its ts."""
        return self._post(channel, thread_ts, status_message(text))

    def post_text(self, channel: str, thread_ts: str | None, text: str) -> str:
        """Post a short plain reply in the thread (e.g. what to ask when a mention held no question)."""
        return self._post(channel, thread_ts, text_message(text))

    def update_status(self, channel: str, ts: str, text: str) -> None:
        """Change the status message's text as rounds progress."""
        self._update(channel, ts, status_message(text))

    def post_answer(self, channel: str, thread_ts: str | None, status_ts: str | None, payload: dict[str, Any]) -> str:
        """Show the answer: edit the message `status_ts` when known (the status message, or the answer a failed
        earlier attempt posted), otherwise post it in the thread; then upload a CSV of each result too large for the
        message's table. Returns the answer message's ts, which the caller stores."""
        message = answer_message(payload)
        ts = None
        if status_ts:
            try:
                self._update(channel, status_ts, message)
                ts = status_ts
            except SlackDeliveryError as exc:
                if exc.error != "message_not_found":  # someone deleted the status message: post the answer anew
                    raise
        if ts is None:
            ts = self._post(channel, thread_ts, message)
        files = result_files(payload)
        if files:
            uploads = [{"content": f.content, "filename": f.filename, "title": f.title} for f in files]
            try:
                with self._calling("files.uploadV2"):
                    self.client.files_upload_v2(file_uploads=uploads, channel=channel, thread_ts=thread_ts)
            except SlackDeliveryError as exc:
                raise SlackDeliveryError(
                    f"the answer was posted but its CSV file was not: {exc}", error=exc.error, answer_ts=ts
                ) from exc
        return ts

    def _post(self, channel: str, thread_ts: str | None, message: SlackMessage) -> str:
        with self._calling("chat.postMessage"):
            response = self.client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=message.text,
                blocks=message.blocks,
                unfurl_links=False,
                unfurl_media=False,
            )
        ts = response.get("ts")
        if not isinstance(ts, str) or not ts:
            raise SlackDeliveryError("Slack chat.postMessage answered without a message ts")
        return ts

    def _update(self, channel: str, ts: str, message: SlackMessage) -> None:
        with self._calling("chat.update"):
            self.client.chat_update(channel=channel, ts=ts, text=message.text, blocks=message.blocks)

    @contextmanager
    def _calling(self, method: str) -> Iterator[None]:
        """Turn whatever `method` raised into a SlackDeliveryError with a readable, token-free message."""
        try:
            yield
        except SlackApiError as exc:
            status = getattr(exc.response, "status_code", None)
            error = exc.response.get("error") if hasattr(exc.response, "get") else None
            code = str(error) if error else None
            if status == 429:
                text = f"Slack {method} was still rate limited after {RATE_LIMIT_RETRIES} retries"
            else:
                text = f"Slack {method} failed: {code or f'HTTP {status}'}"
                needed = exc.response.get("needed") if hasattr(exc.response, "get") else None
                if needed:
                    text += f" (the app needs the {needed} scope)"
            raise SlackDeliveryError(self._scrub(text), error=code) from None
        except (SlackClientError, OSError) as exc:
            raise SlackDeliveryError(self._scrub(f"Slack {method} failed: {exc}")) from None

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "[token]") if self._token else text


def _optional_str(value: object) -> str | None:
    return str(value) if value else None
