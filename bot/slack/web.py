"""The Slack Web API client: posting and updating the status message, replacing it with the answer, uploading
result CSVs, and the read calls directory sync makes (`read_api`). The one module that imports `slack_sdk`.

Every call goes through `slack_sdk.WebClient` with retry handlers: HTTP 429 is retried after the Retry-After the
answer names (up to `RATE_LIMIT_RETRIES` times), a dropped connection once more. A retried delivery never duplicates
the answer: `post_answer` edits the message whose ts the caller stored (the status message, or the answer of an
earlier attempt) instead of posting a new one.

In a Slack assistant thread the status is the thread's status line (`assistant.threads.setStatus`) and the answer is
streamed (`chat.startStream`, `chat.appendStream`, `chat.stopStream` with the SQL and result blocks at the end).
The stream's ts goes to the caller the moment Slack gives it (`StreamTo.created`), so a later retry edits it. When
Slack refuses to start a stream the answer is posted as a message; when a started stream fails (expired, refused)
the streamed message is replaced by the whole answer with `chat.update`; either way the thread shows one answer.

While the turn works, its tool steps are task updates in that stream (`stream_tasks`: `chat.startStream` with
`task_display_mode="plan"` and the first task, then `chat.appendStream` with `task_update` chunks, each task
`in_progress`, then `complete` or `error`); the answer then continues the same stream (`StreamTo.ts`): the tasks'
final states and the plan's closing title, the Markdown, and `chat.stopStream` with the answer's blocks.
Every failure becomes a `SlackDeliveryError` whose message says what
failed and never carries the token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
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
from slack_sdk.models.messages.chunk import Chunk, MarkdownTextChunk, PlanUpdateChunk, TaskUpdateChunk

from bot.slack.blocks import SlackMessage, answer_message, status_message, text_message
from bot.slack.results import result_files
from core.answer.model import Answer
from core.config.settings import Settings
from core.errors import ConfigError, TablescoutError

DEFAULT_API_URL = "https://slack.com/api/"
RATE_LIMIT_RETRIES = 5
CONNECTION_RETRIES = 1
TIMEOUT_S = 30
log = logging.getLogger(__name__)
#: `Conversation.reference["surface"]` of a Slack assistant thread (the agents and AI apps surface).
ASSISTANT = "assistant"
#: Characters of the answer's Markdown sent per chat.appendStream (Slack takes at most 12,000 per call).
STREAM_PIECE = 400
STREAM_LIMIT = 12000
#: The thread status line holds a short phrase.
THREAD_STATUS_LIMIT = 150
#: How a turn's tool steps show in its stream: together, in one plan block above the answer.
TASK_DISPLAY_MODE = "plan"
PLAN_TITLE = "Working on your question"
TASK_STATES = frozenset({"pending", "in_progress", "complete", "error"})
TASK_TITLE_LIMIT = 150


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


@dataclass(frozen=True)
class StreamTo:
    """Stream the answer to this user of an assistant thread; `created(ts)` is called once the stream exists.

    `ts` is a stream the turn's task updates opened, which the answer continues; `tasks` are those tasks
    ({"id", "title", "status"}): any still in progress is marked complete as the answer begins."""

    user_id: str
    team_id: str
    created: Callable[[str], None] | None = None
    ts: str | None = None
    tasks: tuple[dict[str, str], ...] = ()


def task_chunk(task: dict[str, str], *, final: bool = False) -> TaskUpdateChunk:
    """A task update; `final` turns a task still in progress (its turn went on without saying) into complete."""
    status = task.get("status") or "in_progress"
    if status not in TASK_STATES:
        status = "in_progress"
    if final and status in ("pending", "in_progress"):
        status = "complete"
    title = " ".join(str(task.get("title") or "Working").split()).rstrip("…").rstrip(".") or "Working"
    if len(title) > TASK_TITLE_LIMIT:
        title = title[: TASK_TITLE_LIMIT - 1].rstrip() + "…"
    return TaskUpdateChunk(id=str(task["id"]), title=title, status=status)


def plan_title(answer: Answer, steps: int) -> str:
    """The plan's title once the answer is there."""
    done = f"{steps} step" + ("" if steps == 1 else "s")
    return f"Answered in {done}" if answer.status == "answered" else f"Stopped after {done}"


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

    def post_message(self, channel: str, message: SlackMessage) -> str:
        """Post a message of tablescout's own (a user id as `channel` posts in that user's DM with the app)."""
        return self._post(channel, None, message)

    def update_message(self, channel: str, ts: str, message: SlackMessage) -> None:
        self._update(channel, ts, message)

    def post_ephemeral(self, channel: str, user: str, text: str) -> None:
        """A reply only `user` sees, in `channel` (e.g. why their click was refused)."""
        with self._calling("chat.postEphemeral"):
            self.client.chat_postEphemeral(channel=channel, user=user, text=text)

    def update_status(self, channel: str, ts: str, text: str) -> None:
        """Change the status message's text as rounds progress."""
        self._update(channel, ts, status_message(text))

    def set_thread_status(self, channel: str, thread_ts: str, text: str) -> None:
        """An assistant thread's status line ("Running SQL on erp…"); "" clears it."""
        with self._calling("assistant.threads.setStatus"):
            self.client.assistant_threads_setStatus(
                channel_id=channel, thread_ts=thread_ts, status=_status_phrase(text)
            )

    def stream_tasks(
        self, channel: str, thread_ts: str, ts: str | None, tasks: list[dict[str, str]], to: StreamTo
    ) -> str:
        """Show `tasks` (task updates) in the turn's stream: start it (a plan block) when `ts` is None, else append
        to it. Returns the stream's ts."""
        chunks: list[Chunk] = [task_chunk(t) for t in tasks]
        if ts is None:
            with self._calling("chat.startStream"):
                started = self.client.chat_startStream(
                    channel=channel,
                    thread_ts=thread_ts,
                    recipient_user_id=to.user_id or None,
                    recipient_team_id=to.team_id or None,
                    task_display_mode=TASK_DISPLAY_MODE,
                    chunks=[PlanUpdateChunk(title=PLAN_TITLE), *chunks],
                )
            ts = started.get("ts")
            if not isinstance(ts, str) or not ts:
                raise SlackDeliveryError("Slack chat.startStream answered without a message ts")
            return ts
        with self._calling("chat.appendStream"):
            self.client.chat_appendStream(channel=channel, ts=ts, chunks=chunks)
        return ts

    def set_thread_title(self, channel: str, thread_ts: str, title: str) -> None:
        """An assistant thread's title (its first question), as the user's history lists it."""
        with self._calling("assistant.threads.setTitle"):
            self.client.assistant_threads_setTitle(channel_id=channel, thread_ts=thread_ts, title=title)

    def post_answer(
        self,
        channel: str,
        thread_ts: str | None,
        status_ts: str | None,
        answer: Answer,
        stream: StreamTo | None = None,
    ) -> str:
        """Show the answer: edit the message `status_ts` when known (the status message, or the answer a failed
        earlier attempt posted), otherwise stream it (`stream`, an assistant thread; continuing `stream.ts` when the
        turn's task updates opened one) or post it in the thread; then upload a CSV of each result too large for the
        message's table. Returns the answer message's ts, which the caller stores."""
        message = answer_message(answer)
        ts = None
        if status_ts:
            try:
                self._update(channel, status_ts, message)
                ts = status_ts
            except SlackDeliveryError as exc:
                if exc.error != "message_not_found":  # someone deleted the status message: post the answer anew
                    raise
        if ts is None and stream is not None and thread_ts:
            ts = self._stream(channel, thread_ts, answer, message, stream)
        if ts is None:
            ts = self._post(channel, thread_ts, message)
        if stream is not None and stream.ts and thread_ts:
            # The stream began before the turn's last status lines, which Slack does not clear on its own then.
            try:
                self.set_thread_status(channel, thread_ts, "")
            except SlackDeliveryError as exc:
                log.info("could not clear the status line of %s: %s", channel, exc)
        files = result_files(answer)
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

    def _stream(self, channel: str, thread_ts: str, answer: Answer, message: SlackMessage, to: StreamTo) -> str | None:
        """Stream the answer into the thread (or on in the stream `to.ts`); None when Slack would not start a stream
        (the caller posts instead)."""
        markdown = answer.text.strip()[:STREAM_LIMIT] or message.text
        pieces = [markdown[i : i + STREAM_PIECE] for i in range(0, len(markdown), STREAM_PIECE)] or [message.text]
        if to.ts:
            ts = to.ts
            rest = pieces
        else:
            try:
                with self._calling("chat.startStream"):
                    started = self.client.chat_startStream(
                        channel=channel,
                        thread_ts=thread_ts,
                        markdown_text=pieces[0],
                        recipient_user_id=to.user_id or None,
                        recipient_team_id=to.team_id or None,
                    )
            except SlackDeliveryError as exc:
                log.info("Slack would not start a stream in %s (%s); posting the answer instead", channel, exc)
                return None
            found = started.get("ts")
            if not isinstance(found, str) or not found:
                raise SlackDeliveryError("Slack chat.startStream answered without a message ts")
            ts, rest = found, pieces[1:]
            if to.created is not None:
                to.created(ts)
        try:
            if to.ts:  # tasks left in progress done, the plan's closing title and the answer's first piece, at once
                unfinished = [t for t in to.tasks if t.get("status") not in ("complete", "error")]
                chunks: list[Chunk] = [task_chunk(t, final=True) for t in unfinished]
                chunks += [PlanUpdateChunk(title=plan_title(answer, len(to.tasks))), MarkdownTextChunk(text=rest[0])]
                with self._calling("chat.appendStream"):
                    self.client.chat_appendStream(channel=channel, ts=ts, chunks=chunks)
                rest = rest[1:]
            for piece in rest:
                with self._calling("chat.appendStream"):
                    self.client.chat_appendStream(channel=channel, ts=ts, markdown_text=piece)
            extras = stream_extras(answer, message)
            with self._calling("chat.stopStream"):
                self.client.chat_stopStream(channel=channel, ts=ts, blocks=extras or None)
        except SlackDeliveryError as exc:  # the stream expired or was refused: the whole answer replaces it
            log.warning("the answer stream in %s broke off (%s); replacing it with the whole answer", channel, exc)
            try:
                self._update(channel, ts, message)
            except SlackDeliveryError as update_failed:
                if update_failed.error != "message_not_found":
                    raise SlackDeliveryError(str(update_failed), error=update_failed.error, answer_ts=ts) from exc
                return None  # the streamed message is gone: post the answer anew
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


def stream_extras(answer: Answer, message: SlackMessage) -> list[dict[str, Any]]:
    """The answer's blocks after its text (SQL, results, tables used, buttons): what a streamed answer, whose text
    came as Markdown, shows at its end. The text's own sections are the leading ones an answer without SQL has."""
    text_only = answer_message(Answer(status=answer.status, text=answer.text)).blocks
    lead = 0
    for mine, plain in zip(message.blocks, text_only, strict=False):
        if mine != plain or mine.get("type") != "section":
            break
        lead += 1
    return message.blocks[lead:]


def _status_phrase(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= THREAD_STATUS_LIMIT else text[: THREAD_STATUS_LIMIT - 1].rstrip() + "…"


def _optional_str(value: object) -> str | None:
    return str(value) if value else None
