"""Streaming in a Slack assistant thread: the turn's tool steps as task updates, then the answer in the same message.

The answer is streamed (`chat.startStream`, `chat.appendStream`, `chat.stopStream` with the SQL and result blocks at
the end). The stream's ts goes to the caller the moment Slack gives it (`StreamTo.created`), so a later retry edits
it. When Slack refuses to start a stream the caller posts the answer as a message; when a started stream fails
(expired, refused) the streamed message is replaced by the whole answer with `chat.update`; either way the thread
shows one answer.

While the turn works, its tool steps are task updates in that stream (`stream_tasks`: `chat.startStream` with
`task_display_mode="plan"` and the first task, then `chat.appendStream` with `task_update` chunks, each task
`in_progress`, then `complete` or `error`); the answer then continues the same stream (`StreamTo.ts`): the tasks'
final states and the plan's closing title, the Markdown, and `chat.stopStream` with the answer's blocks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.messages.chunk import Chunk, MarkdownTextChunk, PlanUpdateChunk, TaskUpdateChunk

from bot.slack.blocks import answer_message
from bot.slack.client import SlackCalls, SlackDeliveryError
from bot.slack.mrkdwn import SlackMessage
from core.answer.model import Answer

log = logging.getLogger(__name__)

#: Characters of the answer's Markdown sent per chat.appendStream (Slack takes at most 12,000 per call).
STREAM_PIECE = 400
STREAM_LIMIT = 12000
#: How a turn's tool steps show in its stream: together, in one plan block above the answer.
TASK_DISPLAY_MODE = "plan"
PLAN_TITLE = "Working on your question"
TASK_STATES = frozenset({"pending", "in_progress", "complete", "error"})
TASK_TITLE_LIMIT = 150


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


def stream_tasks(
    calls: SlackCalls, channel: str, thread_ts: str, ts: str | None, tasks: list[dict[str, str]], to: StreamTo
) -> str:
    """Show `tasks` (task updates) in the turn's stream: start it (a plan block) when `ts` is None, else append
    to it. Returns the stream's ts."""
    chunks: list[Chunk] = [task_chunk(t) for t in tasks]
    if ts is None:
        with calls.calling("chat.startStream"):
            started = calls.client.chat_startStream(
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
    with calls.calling("chat.appendStream"):
        calls.client.chat_appendStream(channel=channel, ts=ts, chunks=chunks)
    return ts


def stream_answer(
    calls: SlackCalls, channel: str, thread_ts: str, answer: Answer, message: SlackMessage, to: StreamTo
) -> str | None:
    """Stream the answer into the thread (or on in the stream `to.ts`); its message's ts, or None when Slack would
    not start a stream or the streamed message is gone (the caller posts instead)."""
    markdown = answer.text.strip()[:STREAM_LIMIT] or message.text
    pieces = [markdown[i : i + STREAM_PIECE] for i in range(0, len(markdown), STREAM_PIECE)] or [message.text]
    if to.ts:
        ts, rest = to.ts, pieces
    else:
        try:
            with calls.calling("chat.startStream"):
                started = calls.client.chat_startStream(
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
        _continue(calls, channel, ts, answer, message, to, rest)
    except SlackDeliveryError as exc:  # the stream expired or was refused: the whole answer replaces it
        log.warning("the answer stream in %s broke off (%s); replacing it with the whole answer", channel, exc)
        try:
            calls.update(channel, ts, message)
        except SlackDeliveryError as update_failed:
            if update_failed.error != "message_not_found":
                raise SlackDeliveryError(str(update_failed), error=update_failed.error, answer_ts=ts) from exc
            return None  # the streamed message is gone: post the answer anew
    return ts


def _continue(
    calls: SlackCalls, channel: str, ts: str, answer: Answer, message: SlackMessage, to: StreamTo, rest: list[str]
) -> None:
    """Append the rest of the answer's Markdown to stream `ts` and stop it with the answer's other blocks."""
    if to.ts:  # tasks left in progress done, the plan's closing title and the answer's first piece, at once
        unfinished = [t for t in to.tasks if t.get("status") not in ("complete", "error")]
        chunks: list[Chunk] = [task_chunk(t, final=True) for t in unfinished]
        chunks += [PlanUpdateChunk(title=plan_title(answer, len(to.tasks))), MarkdownTextChunk(text=rest[0])]
        with calls.calling("chat.appendStream"):
            calls.client.chat_appendStream(channel=channel, ts=ts, chunks=chunks)
        rest = rest[1:]
    for piece in rest:
        with calls.calling("chat.appendStream"):
            calls.client.chat_appendStream(channel=channel, ts=ts, markdown_text=piece)
    extras = stream_extras(answer, message)
    with calls.calling("chat.stopStream"):
        calls.client.chat_stopStream(channel=channel, ts=ts, blocks=extras or None)


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
