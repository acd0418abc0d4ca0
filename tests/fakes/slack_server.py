"""A local fake of the Slack Web API, so the real slack_sdk (and slack-bolt) talk HTTP to something that behaves like
Slack for the methods tablescout uses.

    with FakeSlack() as slack:            # or the `fake_slack` fixture
        WebClient(token=slack.token, base_url=slack.url)   # slack.url ends in "/api/"

Methods: `auth.test`, `chat.postMessage` (to a user id: into that user's DM with the app, channel `D` + the rest
of the id), `chat.postEphemeral` (kept in `slack.ephemerals`), `chat.update`, `files.getUploadURLExternal`, the
upload POST to the URL it hands out (on this server), `files.completeUploadExternal`,
`assistant.threads.setStatus` / `setTitle` / `setSuggestedPrompts` (recorded; `slack.thread_status(channel,
thread)` is the latest status), and the streaming methods `chat.startStream` (a new message in the thread,
`streaming` True), `chat.appendStream` (its Markdown grows; `message_not_in_streaming_state` once stopped) and
`chat.stopStream` (blocks added, `streaming` False).
Streaming calls may carry `chunks`: `markdown_text` chunks grow the text, `task_update` chunks set the message's
task of that id (`message.tasks`, in first-seen order, each with its `history` of states), `plan_update` chunks
its `plan_title`; `task_display_mode` is kept (`message.task_display_mode`); an unknown chunk type or task status
answers `invalid_chunks`. `chat.update` of a streamed message replaces its tasks and plan like its text.
`fail("chat.appendStream", "streaming_state_conflict")` breaks a stream mid-answer. Other helpers add methods with
`slack.register(method, handler)`; an unknown method answers `unknown_method`.

Like Slack, every method answers HTTP 200 with `{"ok": false, "error": ...}` on failure: `not_authed` without a
token, `invalid_auth` with the wrong one, `channel_not_found` without a channel, `message_not_found` when
`chat.update` names no message of the channel, `invalid_blocks` when blocks break Slack's limits (50 blocks, 3000
characters of section text, 10 context elements, 150 characters of header text, one `table` block, a `data_table`
block's 2-101 rows, 1-20 columns and 10,000 characters), `msg_too_long` for text over 40000 characters.
`FakeSlack(data_table=False)` is a workspace without the `data_table` block: a message holding one answers
`invalid_blocks`.

Injected failures: `rate_limit(method, times, retry_after)` answers the next `times` calls with HTTP 429 and a
Retry-After header (`{"ok": false, "error": "ratelimited"}`); `fail(method, error, times)` answers Slack errors.

Every request is recorded in `slack.calls` (method, params, headers, HTTP status, answer), including refused and
rate-limited ones. The channels' messages are kept (`slack.messages(channel)`, `slack.thread(channel, thread_ts)`,
`slack.message(channel, ts)`) with updates applied; uploaded files are kept in `slack.files` (bytes, name, title,
channel, thread), not as messages, so "exactly one answer in the thread" is `len(slack.thread(channel, ts)) == 1`.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.message import Message as EmailMessage
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

DEFAULT_TOKEN = "xoxb-fake-0000-tablescout"
APP_TOKEN = "xapp-1-fake-0000-tablescout"  # the app-level token Socket Mode uses
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
TEAM_ID = "T0FAKE"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
MAX_BLOCKS = 50
SECTION_TEXT_LIMIT = 3000
HEADER_TEXT_LIMIT = 150
CONTEXT_ELEMENTS = 10
TABLE_ROWS = 100  # rows of a table block, its header included
TABLE_CELLS = 20  # cells of one table row
DATA_TABLE_ROWS = 101  # rows of a data_table block, its header included
DATA_TABLE_CHARS = 10_000  # characters across the data_table cells of one message
CONTEXT_ACTIONS = 5  # elements of a context_actions block
ACTION_ELEMENTS = 25  # elements of an actions block
BUTTON_TEXT = 75  # characters of a button's text
TEXT_LIMIT = 40000
CHUNK_TYPES = frozenset({"markdown_text", "task_update", "plan_update", "blocks"})
TASK_STATES = frozenset({"pending", "in_progress", "complete", "error"})

Answer = tuple[int, dict[str, Any], dict[str, str]]  # HTTP status, JSON body, extra headers
Handler = Callable[["SlackCall"], dict[str, Any]]


class SlackError(Exception):
    """Raised by a method handler: the method answers `{"ok": false, "error": code}`."""

    def __init__(self, code: str, **extra: Any) -> None:
        super().__init__(code)
        self.code = code
        self.extra = extra


@dataclass
class SlackCall:
    """One request the fake received."""

    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    status: int = 0
    answer: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.answer.get("ok"))


@dataclass
class SlackMessage:
    """A message in a channel, as the fake keeps it: `edits` counts chat.update calls applied to it."""

    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None
    user: str
    bot_id: str | None
    unfurl_links: Any = None
    unfurl_media: Any = None
    edits: int = 0
    streaming: bool | None = None  # None: an ordinary message; True while a stream appends to it; False once stopped
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task id -> latest task_update (+ "history")
    plan_title: str | None = None
    task_display_mode: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.text, "user": self.user}
        if self.blocks:
            out["blocks"] = self.blocks
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if self.bot_id:
            out["bot_id"] = self.bot_id
        if self.edits:
            out["edited"] = {"user": self.user, "ts": self.ts}
        return out

    @property
    def block_text(self) -> str:
        """All the text of the message's blocks, joined by newlines (what a person reads)."""
        parts: list[str] = []
        for block in self.blocks:
            text = block.get("text")
            if isinstance(text, dict):
                parts.append(str(text.get("text", "")))
            for element in block.get("elements") or []:
                if isinstance(element, dict) and "text" in element:
                    parts.append(str(element["text"]))
            for row in block.get("rows") or []:  # a table block: one line per row, cells joined by " | "
                parts.append(" | ".join(str(c.get("text", "")) for c in row if isinstance(c, dict)))
        return "\n".join(parts)


@dataclass
class UploadedFile:
    """A file uploaded with files upload v2: `content` arrives with the upload POST, the rest on completion."""

    id: str
    filename: str
    length: int
    content: bytes | None = None
    title: str | None = None
    channel: str | None = None
    thread_ts: str | None = None
    initial_comment: str | None = None
    alt_txt: str | None = None  # the image's description, given with files.getUploadURLExternal
    completed: bool = False


class FakeSlack:
    """The fake Slack Web API server; see the module docstring."""

    def __init__(
        self, token: str = DEFAULT_TOKEN, host: str = "127.0.0.1", port: int = 0, *, data_table: bool = True
    ) -> None:
        self.token = token
        self.data_table = data_table  # whether this workspace takes the data_table block
        self.app_token = APP_TOKEN
        self.host = host
        self.calls: list[SlackCall] = []
        self.files: dict[str, UploadedFile] = {}
        self.ephemerals: list[tuple[str, str, str]] = []  # (channel, user, text) of chat.postEphemeral
        self._messages: dict[str, dict[str, SlackMessage]] = {}
        self._lock = threading.RLock()
        self._clock = itertools.count(1)
        self._file_ids = itertools.count(1)
        self._rate_limits: dict[str, list[int]] = {}  # method -> Retry-After seconds of each pending 429
        self._failures: dict[str, list[str]] = {}  # method -> pending error codes
        self._handlers: dict[str, Handler] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.update": self._update,
            "files.getUploadURLExternal": self._get_upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "assistant.threads.setStatus": self._assistant_call,
            "assistant.threads.setTitle": self._assistant_call,
            "assistant.threads.setSuggestedPrompts": self._assistant_call,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
        }
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------------------------------

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-slack", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def root(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The Web API base URL (for WebClient(base_url=...) and TABLESCOUT_SLACK_API_URL)."""
        return self.root + "/api/"

    # --- what a test sets up ------------------------------------------------------------------------------------

    def register(self, method: str, handler: Handler) -> None:
        """Serve `method` with `handler(call) -> answer fields`; raise SlackError(code) for an error answer."""
        with self._lock:
            self._handlers[method] = handler

    def rate_limit(self, method: str, times: int = 1, retry_after: int = 1) -> None:
        """Answer the next `times` calls of `method` with HTTP 429 and `Retry-After: retry_after`."""
        with self._lock:
            self._rate_limits.setdefault(method, []).extend([retry_after] * times)

    def fail(self, method: str, error: str, times: int = 1) -> None:
        """Answer the next `times` calls of `method` with `{"ok": false, "error": error}`."""
        with self._lock:
            self._failures.setdefault(method, []).extend([error] * times)

    def add_message(self, channel: str, text: str, user: str = "U0HUMAN", thread_ts: str | None = None) -> str:
        """A message someone else wrote (a question to answer in its thread); returns its ts."""
        with self._lock:
            message = SlackMessage(channel, self._next_ts(), text, [], thread_ts, user, None)
            self._messages.setdefault(channel, {})[message.ts] = message
            return message.ts

    # --- what a test asserts ------------------------------------------------------------------------------------

    def calls_to(self, method: str, *, ok: bool | None = None) -> list[SlackCall]:
        """The recorded calls of `method`; `ok=True` only those Slack accepted, `ok=False` only refused ones."""
        with self._lock:
            return [c for c in self.calls if c.method == method and (ok is None or c.ok == ok)]

    def messages(self, channel: str) -> list[SlackMessage]:
        """The channel's messages in posting order, updates applied."""
        with self._lock:
            return sorted(self._messages.get(channel, {}).values(), key=lambda m: float(m.ts))

    def thread(self, channel: str, thread_ts: str) -> list[SlackMessage]:
        """The replies in the thread under `thread_ts` (not the parent itself), in posting order."""
        return [m for m in self.messages(channel) if m.thread_ts == thread_ts and m.ts != thread_ts]

    def message(self, channel: str, ts: str) -> SlackMessage:
        with self._lock:
            return self._messages[channel][ts]

    def thread_status(self, channel: str, thread_ts: str) -> str | None:
        """The latest status accepted by assistant.threads.setStatus for the thread (None when never set)."""
        statuses = [
            str(c.params.get("status") or "")
            for c in self.calls_to("assistant.threads.setStatus", ok=True)
            if c.params.get("channel_id") == channel and c.params.get("thread_ts") == thread_ts
        ]
        return statuses[-1] if statuses else None

    def completed_files(self, channel: str | None = None) -> list[UploadedFile]:
        """Files whose upload was completed (shared), optionally only those shared to `channel`."""
        with self._lock:
            return [f for f in self.files.values() if f.completed and (channel is None or f.channel == channel)]

    # --- serving ------------------------------------------------------------------------------------------------

    def answer(self, method: str, params: dict[str, Any], headers: dict[str, str]) -> Answer:
        call = SlackCall(method, params, headers)
        with self._lock:
            self.calls.append(call)
            status, body, extra = self._dispatch(call)
            call.status, call.answer = status, body
        return status, body, extra

    def _dispatch(self, call: SlackCall) -> Answer:
        pending = self._rate_limits.get(call.method)
        if pending:
            retry_after = pending.pop(0)
            return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)}
        presented = _presented_token(call)
        if not presented:
            return 200, {"ok": False, "error": "not_authed"}, {}
        if presented != (self.app_token if call.method in APP_TOKEN_METHODS else self.token):
            return 200, {"ok": False, "error": "invalid_auth"}, {}
        failures = self._failures.get(call.method)
        if failures:
            return 200, {"ok": False, "error": failures.pop(0)}, {}
        handler = self._handlers.get(call.method)
        if handler is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        try:
            return 200, {"ok": True, **handler(call)}, {}
        except SlackError as exc:
            return 200, {"ok": False, "error": exc.code, **exc.extra}, {}

    def receive_upload(self, file_id: str, content: bytes) -> int:
        """The upload POST to a URL from files.getUploadURLExternal; returns the HTTP status."""
        with self._lock:
            self.calls.append(SlackCall("upload", {"file_id": file_id, "bytes": len(content)}, {}, status=200))
            upload = self.files.get(file_id)
            if upload is None or upload.completed:
                self.calls[-1].status = 404
                return 404
            upload.content = content
            return 200

    def _next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._clock):06d}"

    def _auth_test(self, call: SlackCall) -> dict[str, Any]:
        return {
            "url": "https://tablescout-fake.slack.com/",
            "team": "tablescout fake",
            "user": "tablescout",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _message_content(self, params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        text = params.get("text")
        blocks = params.get("blocks")
        if isinstance(blocks, str):
            try:
                blocks = json.loads(blocks)
            except json.JSONDecodeError:
                raise SlackError("invalid_blocks_format") from None
        if blocks is not None and not isinstance(blocks, list):
            raise SlackError("invalid_blocks_format")
        if not text and not blocks:
            raise SlackError("no_text")
        if text is not None and len(str(text)) > TEXT_LIMIT:
            raise SlackError("msg_too_long")
        problems = block_problems(blocks or [], data_table=self.data_table)
        if problems:
            raise SlackError("invalid_blocks", errors=problems)
        return str(text or ""), list(blocks or [])

    def _post_message(self, call: SlackCall) -> dict[str, Any]:
        channel = call.params.get("channel")
        if not channel:
            raise SlackError("channel_not_found")
        channel = dm_channel(str(channel))
        text, blocks = self._message_content(call.params)
        thread_ts = call.params.get("thread_ts") or None
        message = SlackMessage(
            str(channel),
            self._next_ts(),
            text,
            blocks,
            str(thread_ts) if thread_ts else None,
            BOT_USER_ID,
            BOT_ID,
            unfurl_links=call.params.get("unfurl_links"),
            unfurl_media=call.params.get("unfurl_media"),
        )
        self._messages.setdefault(message.channel, {})[message.ts] = message
        return {"channel": message.channel, "ts": message.ts, "message": message.as_json()}

    def _post_ephemeral(self, call: SlackCall) -> dict[str, Any]:
        channel, user = str(call.params.get("channel") or ""), str(call.params.get("user") or "")
        if not channel:
            raise SlackError("channel_not_found")
        if not user:
            raise SlackError("user_not_in_channel")
        text, _ = self._message_content(call.params)
        self.ephemerals.append((channel, user, text))
        return {"message_ts": self._next_ts()}

    def _update(self, call: SlackCall) -> dict[str, Any]:
        channel = str(call.params.get("channel") or "")
        ts = str(call.params.get("ts") or "")
        if not channel:
            raise SlackError("channel_not_found")
        message = self._messages.get(channel, {}).get(ts)
        if message is None:
            raise SlackError("message_not_found")
        if message.user != BOT_USER_ID:
            raise SlackError("cant_update_message")
        text, blocks = self._message_content(call.params)
        message.text, message.blocks = text, blocks
        message.edits += 1
        message.streaming = None if message.streaming is None else False
        message.tasks, message.plan_title = {}, None
        return {"channel": channel, "ts": ts, "text": text, "message": message.as_json()}

    def _assistant_call(self, call: SlackCall) -> dict[str, Any]:
        needs_thread = not call.method.endswith("setSuggestedPrompts")
        if not call.params.get("channel_id") or (needs_thread and not call.params.get("thread_ts")):
            raise SlackError("invalid_arguments")
        if call.method.endswith("setTitle") and not call.params.get("title"):
            raise SlackError("invalid_arguments")
        return {}

    def _start_stream(self, call: SlackCall) -> dict[str, Any]:
        channel = str(call.params.get("channel") or "")
        thread_ts = str(call.params.get("thread_ts") or "")
        if not channel:
            raise SlackError("channel_not_found")
        if not thread_ts:
            raise SlackError("invalid_arguments")
        chunks = _chunks(call.params)
        text = str(call.params.get("markdown_text") or "")
        message = SlackMessage(channel, self._next_ts(), text, [], thread_ts, BOT_USER_ID, BOT_ID, streaming=True)
        mode = call.params.get("task_display_mode")
        if mode is not None and mode not in ("timeline", "plan"):
            raise SlackError("invalid_arguments")
        message.task_display_mode = mode
        _apply_chunks(message, chunks)
        self._messages.setdefault(channel, {})[message.ts] = message
        return {"channel": channel, "ts": message.ts}

    def _streamed(self, call: SlackCall) -> SlackMessage:
        channel = str(call.params.get("channel") or "")
        message = self._messages.get(channel, {}).get(str(call.params.get("ts") or ""))
        if message is None:
            raise SlackError("message_not_found")
        if not message.streaming:
            raise SlackError("message_not_in_streaming_state")
        return message

    def _append_stream(self, call: SlackCall) -> dict[str, Any]:
        message = self._streamed(call)
        chunks = _chunks(call.params)
        if not chunks and not call.params.get("markdown_text"):
            raise SlackError("invalid_arguments")
        message.text += str(call.params.get("markdown_text") or "")
        _apply_chunks(message, chunks)
        return {"channel": message.channel, "ts": message.ts}

    def _stop_stream(self, call: SlackCall) -> dict[str, Any]:
        message = self._streamed(call)
        chunks = _chunks(call.params)
        message.text += str(call.params.get("markdown_text") or "")
        _apply_chunks(message, chunks)
        blocks = call.params.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        problems = block_problems(list(blocks or []), data_table=self.data_table)
        if problems:
            raise SlackError("invalid_blocks", errors=problems)
        message.blocks = list(blocks or [])
        message.streaming = False
        return {"channel": message.channel, "ts": message.ts, "message": message.as_json()}

    def _get_upload_url(self, call: SlackCall) -> dict[str, Any]:
        filename = call.params.get("filename")
        length = call.params.get("length")
        if not filename:
            raise SlackError("invalid_arguments")
        try:
            size = int(str(length))
        except ValueError:
            raise SlackError("invalid_arguments") from None
        file_id = f"F{next(self._file_ids):08d}"
        alt = call.params.get("alt_txt")
        self.files[file_id] = UploadedFile(file_id, str(filename), size, alt_txt=str(alt) if alt else None)
        return {"upload_url": f"{self.root}/upload/{file_id}", "file_id": file_id}

    def _complete_upload(self, call: SlackCall) -> dict[str, Any]:
        raw = call.params.get("files")
        try:
            entries = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            raise SlackError("invalid_arguments") from None
        if not isinstance(entries, list) or not entries:
            raise SlackError("invalid_arguments")
        done = []
        for entry in entries:
            upload = self.files.get(str(entry.get("id")))
            if upload is None or upload.content is None:
                raise SlackError("file_not_found")
            if len(upload.content) != upload.length:
                raise SlackError("file_upload_size_mismatch")  # length announced in step 1 differs from the bytes
            upload.title = entry.get("title") or upload.filename
            upload.channel = call.params.get("channel_id") or None
            upload.thread_ts = call.params.get("thread_ts") or None
            upload.initial_comment = call.params.get("initial_comment") or None
            upload.completed = True
            done.append({"id": upload.id, "title": upload.title, "name": upload.filename})
        return {"files": done}


def dm_channel(channel: str) -> str:
    """Where chat.postMessage to a user id posts: that user's DM with the app (`D` and the rest of the id)."""
    return "D" + channel[1:] if channel[:1] in ("U", "W") else channel


def _chunks(params: dict[str, Any]) -> list[dict[str, Any]]:
    """A streaming call's `chunks`, checked like Slack: known types, task updates with id, title and a status."""
    raw = params.get("chunks")
    if raw is None:
        return []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise SlackError("invalid_chunks") from None
    if not isinstance(raw, list):
        raise SlackError("invalid_chunks")
    for chunk in raw:
        if not isinstance(chunk, dict) or chunk.get("type") not in CHUNK_TYPES:
            raise SlackError("invalid_chunks")
        if chunk["type"] == "task_update" and (
            not chunk.get("id") or not chunk.get("title") or chunk.get("status") not in TASK_STATES
        ):
            raise SlackError("invalid_chunks")
        if chunk["type"] == "plan_update" and not chunk.get("title"):
            raise SlackError("invalid_chunks")
    return list(raw)


def _apply_chunks(message: SlackMessage, chunks: list[dict[str, Any]]) -> None:
    for chunk in chunks:
        kind = chunk["type"]
        if kind == "markdown_text":
            message.text += str(chunk.get("text") or "")
        elif kind == "task_update":
            earlier = message.tasks.get(str(chunk["id"]), {})
            history = [*earlier.get("history", []), chunk["status"]]
            message.tasks[str(chunk["id"])] = {**chunk, "history": history}
        elif kind == "plan_update":
            message.plan_title = str(chunk["title"])
        elif kind == "blocks":
            message.blocks += list(chunk.get("blocks") or [])


def block_problems(blocks: list[Any], *, data_table: bool = True) -> list[str]:
    """What in `blocks` breaks Slack's Block Kit limits (an empty list when nothing does); `data_table`: whether the
    workspace takes that block at all."""
    problems = []
    if len(blocks) > MAX_BLOCKS:
        problems.append(f"must provide an array with no more than {MAX_BLOCKS} items [json-pointer:/blocks]")
    for i, block in enumerate(blocks):
        where = f"[json-pointer:/blocks/{i}]"
        if not isinstance(block, dict) or "type" not in block:
            problems.append(f"missing required field: type {where}")
            continue
        text = block.get("text")
        if block["type"] == "section":
            if not isinstance(text, dict) or not str(text.get("text", "")):
                problems.append(f"must provide a non-empty text {where}")
            elif len(str(text["text"])) > SECTION_TEXT_LIMIT:
                problems.append(f"must be less than {SECTION_TEXT_LIMIT + 1} characters {where}/text")
        elif block["type"] == "header":
            if not isinstance(text, dict) or len(str(text.get("text", ""))) > HEADER_TEXT_LIMIT:
                problems.append(f"must be less than {HEADER_TEXT_LIMIT + 1} characters {where}/text")
        elif block["type"] == "table":
            problems += _table_problems(block, where)
            if sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "table") > 1:
                problems.append(f"only_one_table_allowed {where}")
        elif block["type"] == "data_table":
            problems += _data_table_problems(block, where) if data_table else [f"unsupported block type {where}"]
            if sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "data_table") > 1:
                problems.append(f"only_one_table_allowed {where}")
        elif block["type"] == "context_actions":
            problems += _context_actions_problems(block, where)
        elif block["type"] == "actions":
            problems += _actions_problems(block, where)
        elif block["type"] == "context":
            elements = block.get("elements")
            if not isinstance(elements, list) or not 1 <= len(elements) <= CONTEXT_ELEMENTS:
                problems.append(f"must provide 1 to {CONTEXT_ELEMENTS} elements {where}/elements")
            else:
                for j, element in enumerate(elements):
                    if isinstance(element, dict) and len(str(element.get("text", ""))) > SECTION_TEXT_LIMIT:
                        problems.append(f"must be less than {SECTION_TEXT_LIMIT + 1} characters {where}/elements/{j}")
    return problems


def _table_problems(block: dict[str, Any], where: str) -> list[str]:
    rows = block.get("rows")
    if not isinstance(rows, list) or not 1 <= len(rows) <= TABLE_ROWS:
        return [f"must provide 1 to {TABLE_ROWS} rows {where}/rows"]
    problems = []
    for r, row in enumerate(rows):
        if not isinstance(row, list) or not 1 <= len(row) <= TABLE_CELLS:
            problems.append(f"must provide 1 to {TABLE_CELLS} cells {where}/rows/{r}")
            continue
        for c, cell in enumerate(row):
            kind = cell.get("type") if isinstance(cell, dict) else None
            if kind == "raw_text" and not str(cell.get("text") or ""):
                problems.append(f"must provide a non-empty text {where}/rows/{r}/{c}")
            elif kind not in ("raw_text", "rich_text"):
                problems.append(f"cell must be raw_text or rich_text {where}/rows/{r}/{c}")
    settings = block.get("column_settings")
    if settings is not None:
        if not isinstance(settings, list) or len(settings) > TABLE_CELLS:
            problems.append(f"must provide at most {TABLE_CELLS} column settings {where}/column_settings")
        else:
            for c, setting in enumerate(settings):
                if isinstance(setting, dict) and setting.get("align", "left") not in ("left", "center", "right"):
                    problems.append(f"align must be left, center or right {where}/column_settings/{c}")
    return problems


def _data_table_problems(block: dict[str, Any], where: str) -> list[str]:
    rows = block.get("rows")
    if not isinstance(rows, list) or not 2 <= len(rows) <= DATA_TABLE_ROWS:
        return [f"must provide 2 to {DATA_TABLE_ROWS} rows {where}/rows"]
    if not str(block.get("caption") or ""):
        return [f"must provide a caption {where}/caption"]
    page = block.get("page_size", 5)
    problems = [] if isinstance(page, int) and 1 <= page <= 100 else [f"page_size must be 1 to 100 {where}"]
    width = len(rows[0]) if isinstance(rows[0], list) else 0
    characters = 0
    for r, row in enumerate(rows):
        if not isinstance(row, list) or not 1 <= len(row) <= TABLE_CELLS or len(row) != width:
            problems.append(f"every row must have the same 1 to {TABLE_CELLS} cells {where}/rows/{r}")
            continue
        for c, cell in enumerate(row):
            kind = cell.get("type") if isinstance(cell, dict) else None
            text = str(cell.get("text") or "") if isinstance(cell, dict) else ""
            characters += len(text)
            if kind == "raw_number":
                value = cell.get("value")
                if isinstance(value, bool) or not isinstance(value, int | float) or not text or r == 0:
                    problems.append(f"raw_number needs a number value and text, not in the header {where}/rows/{r}/{c}")
            elif kind == "raw_text":
                if not text:
                    problems.append(f"must provide a non-empty text {where}/rows/{r}/{c}")
            elif kind != "rich_text" or r == 0:
                problems.append(f"cell must be raw_text, raw_number or rich_text {where}/rows/{r}/{c}")
    if characters > DATA_TABLE_CHARS:
        problems.append(f"cells hold more than {DATA_TABLE_CHARS} characters {where}")
    return problems


def _context_actions_problems(block: dict[str, Any], where: str) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list) or not 1 <= len(elements) <= CONTEXT_ACTIONS:
        return [f"must provide 1 to {CONTEXT_ACTIONS} elements {where}/elements"]
    problems = []
    for j, element in enumerate(elements):
        kind = element.get("type") if isinstance(element, dict) else None
        if kind == "feedback_buttons":
            for side in ("positive_button", "negative_button"):
                button = element.get(side)
                if not isinstance(button, dict) or not button.get("value") or not isinstance(button.get("text"), dict):
                    problems.append(f"must provide text and value {where}/elements/{j}/{side}")
        elif kind != "icon_button":
            problems.append(f"element must be feedback_buttons or icon_button {where}/elements/{j}")
    return problems


def _actions_problems(block: dict[str, Any], where: str) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list) or not 1 <= len(elements) <= ACTION_ELEMENTS:
        return [f"must provide 1 to {ACTION_ELEMENTS} elements {where}/elements"]
    problems, seen = [], set()
    for j, element in enumerate(elements):
        text = element.get("text") if isinstance(element, dict) else None
        if not isinstance(element, dict) or element.get("type") != "button" or not isinstance(text, dict):
            problems.append(f"element must be a button with text {where}/elements/{j}")
            continue
        style = element.get("style", "primary")
        if len(str(text.get("text") or "")) > BUTTON_TEXT or style not in ("primary", "danger"):
            problems.append(f"button text over {BUTTON_TEXT} characters or unknown style {where}/elements/{j}")
        if element.get("action_id") in seen:
            problems.append(f"action_id must be unique {where}/elements/{j}")
        seen.add(element.get("action_id"))
    return problems


def _presented_token(call: SlackCall) -> str:
    authorization = call.headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return str(call.params.get("token") or "")


def _form_fields(content_type: str, body: bytes) -> dict[str, Any]:
    """The fields of a multipart/form-data body (file parts as bytes)."""
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        assert isinstance(part, EmailMessage)
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = payload if part.get_filename() else payload.decode("utf-8")
    return fields


def parse_params(content_type: str, body: bytes, query: str) -> dict[str, Any]:
    """A Web API call's arguments from the query string and the JSON, form or multipart body."""
    params: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
    kind = content_type.split(";")[0].strip().lower()
    if not body:
        return params
    if kind == "application/json":
        data = json.loads(body.decode("utf-8"))
        if isinstance(data, dict):
            params.update(data)
    elif kind == "multipart/form-data":
        params.update(_form_fields(content_type, body))
    else:
        params.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    return params


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeSlack


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        fake = self.server.fake
        if parts.path.startswith("/upload/"):
            content = body
            content_type = self.headers.get("Content-Type", "")
            if content_type.lower().startswith("multipart/form-data"):
                fields = [v for v in _form_fields(content_type, body).values() if isinstance(v, bytes)]
                content = fields[0] if fields else b""
            status = fake.receive_upload(parts.path.removeprefix("/upload/"), content)
            self._send(status, f"OK - {len(content)}".encode() if status == 200 else b"not found", "text/plain", {})
            return
        if not parts.path.startswith("/api/"):
            self._send(404, b"not found", "text/plain", {})
            return
        method = parts.path.removeprefix("/api/")
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            params = parse_params(self.headers.get("Content-Type", ""), body, parts.query)
        except (ValueError, UnicodeDecodeError):
            self._send(200, json.dumps({"ok": False, "error": "invalid_form_data"}).encode(), "application/json", {})
            return
        status, answer, extra = fake.answer(method, params, headers)
        self._send(status, json.dumps(answer).encode(), "application/json; charset=utf-8", extra)

    def _send(self, status: int, payload: bytes, content_type: str, extra: Mapping[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass
