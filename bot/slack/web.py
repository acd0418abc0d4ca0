"""Posting tablescout's messages to Slack: the status message and its edits, the answer that replaces it (with the
result CSVs), replies, review messages, and an assistant thread's status line and title.

Every call goes through `SlackCalls` (bot/slack/client.py: rate limits waited out, failures as
`SlackDeliveryError`). A retried delivery never duplicates the answer: `post_answer` edits the message whose ts the
caller stored (the status message, or the answer of an earlier attempt) instead of posting a new one. In a Slack
assistant thread the status is the thread's status line (`assistant.threads.setStatus`) and the answer is streamed
(bot/slack/streaming.py). Read calls (directory sync) are bot/slack/reads.py.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.slack.blocks import answer_message, status_message, text_message
from bot.slack.client import TIMEOUT_S, SlackCalls, SlackDeliveryError
from bot.slack.mrkdwn import SlackMessage
from bot.slack.results import DATA_TABLE, TABLE_BLOCK, NativeTable, result_files
from bot.slack.streaming import StreamTo, stream_answer, stream_tasks
from core.answer.model import Answer
from core.config.settings import Settings
from core.errors import ConfigError

log = logging.getLogger(__name__)
#: `Conversation.reference["surface"]` of a Slack assistant thread (the agents and AI apps surface).
ASSISTANT = "assistant"
#: The thread status line holds a short phrase.
THREAD_STATUS_LIMIT = 150
#: Slack's answers to a message whose blocks it does not take (a workspace without the `data_table` block).
REFUSED_BLOCKS = ("invalid_blocks", "invalid_blocks_format")


class SlackPoster:
    """Posts tablescout's messages to one Slack workspace through its bot token."""

    def __init__(self, token: str, api_url: str | None = None, *, timeout: int = TIMEOUT_S) -> None:
        if not token:
            raise ConfigError("no Slack bot token: set SLACK_BOT_TOKEN")
        self.calls = SlackCalls(token, api_url, timeout=timeout)
        #: The native table block answers use: `data_table` until the workspace refuses it, then `table`.
        self.table: NativeTable = DATA_TABLE

    @classmethod
    def from_settings(cls, settings: Settings) -> SlackPoster:
        """The poster for the configured workspace; ConfigError when SLACK_BOT_TOKEN is not set."""
        if settings.slack_bot_token is None:
            raise ConfigError("no Slack bot token: set SLACK_BOT_TOKEN to post answers in Slack")
        return cls(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)

    @property
    def api_url(self) -> str:
        return str(self.calls.client.base_url)

    def post_status(self, channel: str, thread_ts: str | None, text: str) -> str:
        """Post the status message ("Searching tables…") in the thread; returns its ts."""
        return self.calls.post(channel, thread_ts, status_message(text))

    def post_text(self, channel: str, thread_ts: str | None, text: str) -> str:
        """Post a short plain reply in the thread (e.g. what to ask when a mention held no question)."""
        return self.calls.post(channel, thread_ts, text_message(text))

    def post_message(self, channel: str, message: SlackMessage) -> str:
        """Post a message of tablescout's own (a user id as `channel` posts in that user's DM with the app)."""
        return self.calls.post(channel, None, message)

    def update_message(self, channel: str, ts: str, message: SlackMessage) -> None:
        self.calls.update(channel, ts, message)

    def post_ephemeral(self, channel: str, user: str, text: str) -> None:
        """A reply only `user` sees, in `channel` (e.g. why their click was refused)."""
        with self.calls.calling("chat.postEphemeral"):
            self.calls.client.chat_postEphemeral(channel=channel, user=user, text=text)

    def update_status(self, channel: str, ts: str, text: str) -> None:
        """Change the status message's text as rounds progress."""
        self.calls.update(channel, ts, status_message(text))

    def set_thread_status(self, channel: str, thread_ts: str, text: str) -> None:
        """An assistant thread's status line ("Running SQL on erp…"); "" clears it."""
        with self.calls.calling("assistant.threads.setStatus"):
            self.calls.client.assistant_threads_setStatus(
                channel_id=channel, thread_ts=thread_ts, status=_status_phrase(text)
            )

    def stream_tasks(
        self, channel: str, thread_ts: str, ts: str | None, tasks: list[dict[str, str]], to: StreamTo
    ) -> str:
        """Show `tasks` (task updates) in the turn's stream: start it (a plan block) when `ts` is None, else append
        to it. Returns the stream's ts."""
        return stream_tasks(self.calls, channel, thread_ts, ts, tasks, to)

    def set_thread_title(self, channel: str, thread_ts: str, title: str) -> None:
        """An assistant thread's title (its first question), as the user's history lists it."""
        with self.calls.calling("assistant.threads.setTitle"):
            self.calls.client.assistant_threads_setTitle(channel_id=channel, thread_ts=thread_ts, title=title)

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
        table = self.table
        try:
            ts = self._show(channel, thread_ts, status_ts, answer, stream, table)
        except SlackDeliveryError as exc:
            if exc.error not in REFUSED_BLOCKS or table is not DATA_TABLE or not answer.results:
                raise
            # This workspace does not take the data table block: the older table block from now on; the message a
            # broken stream left (answer_ts) or the status message is edited, so nothing is posted twice.
            log.info("Slack refused the data_table block (%s); answering with the table block", exc)
            self.table = table = TABLE_BLOCK
            again = exc.answer_ts or status_ts
            ts = self._show(channel, thread_ts, again, answer, None if again else stream, table)
        if stream is not None and stream.ts and thread_ts:
            # The stream began before the turn's last status lines, which Slack does not clear on its own then.
            try:
                self.set_thread_status(channel, thread_ts, "")
            except SlackDeliveryError as exc:
                log.info("could not clear the status line of %s: %s", channel, exc)
        self._upload_results(channel, thread_ts, answer, ts, table)
        return ts

    def _show(
        self,
        channel: str,
        thread_ts: str | None,
        status_ts: str | None,
        answer: Answer,
        stream: StreamTo | None,
        table: NativeTable,
    ) -> str:
        """The answer message with `table` as its native table: the status message edited, streamed, or posted."""
        message = answer_message(answer, table)
        if status_ts:
            try:
                self.calls.update(channel, status_ts, message)
                return status_ts
            except SlackDeliveryError as exc:
                if exc.error != "message_not_found":  # someone deleted the status message: post the answer anew
                    raise
        if stream is not None and thread_ts:
            streamed = stream_answer(self.calls, channel, thread_ts, answer, message, stream)
            if streamed is not None:
                return streamed
        return self.calls.post(channel, thread_ts, message)

    def _upload_results(self, channel: str, thread_ts: str | None, answer: Answer, ts: str, table: NativeTable) -> None:
        """Upload the answer's chart and a CSV of each result the answer message `ts` cannot show whole."""
        uploads: list[dict[str, Any]] = []
        chart = answer.chart.png() if answer.chart is not None else None
        if answer.chart is not None and chart is not None:  # the chart beside the table, alt text for screen readers
            title = answer.chart.title or "Chart"
            uploads.append({"content": chart, "filename": "chart.png", "title": title, "alt_txt": answer.chart.alt})
        files = result_files(answer, table)
        uploads += [{"content": f.content, "filename": f.filename, "title": f.title} for f in files]
        if not uploads:
            return
        try:
            with self.calls.calling("files.uploadV2"):
                self.calls.client.files_upload_v2(file_uploads=uploads, channel=channel, thread_ts=thread_ts)
        except SlackDeliveryError as exc:
            raise SlackDeliveryError(
                f"the answer was posted but its files (chart, CSV) were not: {exc}", error=exc.error, answer_ts=ts
            ) from exc


def _status_phrase(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= THREAD_STATUS_LIMIT else text[: THREAD_STATUS_LIMIT - 1].rstrip() + "…"
