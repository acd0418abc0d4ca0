"""The Slack Web API client every call of the bot goes through, and the one error its deliveries raise.

`web_client` is a `slack_sdk.WebClient` with retry handlers: HTTP 429 is retried after the Retry-After the answer
names (up to `RATE_LIMIT_RETRIES` times), a dropped connection once more. `SlackCalls` posts and edits messages with
it, and turns every failure into a `SlackDeliveryError` whose message says what failed and never carries the token.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from bot.slack.mrkdwn import SlackMessage
from core.errors import TablescoutError

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


class SlackCalls:
    """One bot token's Web API calls: `client` for any method, `calling` around each, and the two message calls
    every delivery makes (`post`, `update`)."""

    def __init__(self, token: str, api_url: str | None = None, *, timeout: int = TIMEOUT_S) -> None:
        self._token = token
        self.client = web_client(token, api_url, timeout=timeout)

    def post(self, channel: str, thread_ts: str | None, message: SlackMessage) -> str:
        """chat.postMessage of `message` in the thread (top level when `thread_ts` is None); the new message's ts."""
        with self.calling("chat.postMessage"):
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

    def update(self, channel: str, ts: str, message: SlackMessage) -> None:
        """chat.update: message `ts` becomes `message`."""
        with self.calling("chat.update"):
            self.client.chat_update(channel=channel, ts=ts, text=message.text, blocks=message.blocks)

    @contextmanager
    def calling(self, method: str) -> Iterator[None]:
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
