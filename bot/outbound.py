"""The outbound half of the chat adapters, as the worker uses it: one interface over Slack and Teams.

`Outbound` posts a turn's status message, edits it as the turn progresses, and replaces it with the answer. In a
Slack assistant thread (a `Destination` whose reference says so) progress is the thread's status line instead
(`set_thread_status`) and the answer is streamed into a new message, whose ts `post_answer` hands to `created` as
soon as Slack gives it, so a retry edits that message instead of posting a second answer. There the turn's tool
steps are task updates in a stream the first step opens (`stream_tasks`), which the answer then continues
(`OpenStream`). Both platforms'
failures become `DeliveryFailed`, which says whether the answer message was (or may have been) created,
so the caller can record it and never post the answer twice. `Outbounds` keeps one client per platform for a
worker process; a platform that is not configured is reported as a `DeliveryFailed` with the reason.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from bot.slack.client import SlackDeliveryError
from bot.slack.streaming import StreamTo
from bot.slack.web import ASSISTANT, SlackPoster
from bot.teams.poster import TeamsDeliveryError, TeamsPoster
from core.answer.model import Answer
from core.config.settings import Settings
from core.errors import ConfigError, TablescoutError


class DeliveryFailed(TablescoutError):
    """A status or answer could not be delivered.

    `message_id` is the answer message when it was created before a later step failed (a Slack CSV upload): the
    caller stores it so a retry edits that message. `final` is True when retrying could duplicate the answer (a
    Teams send whose outcome is unknown) or cannot help (the platform is not configured, the channel is gone); a
    bot token that Entra ID could not issue is not final, so the answer is tried again with the delivery backoff.
    """

    def __init__(self, message: str, *, message_id: str | None = None, final: bool = False) -> None:
        super().__init__(message)
        self.message_id = message_id
        self.final = final


@dataclass(frozen=True)
class Destination:
    """Where a conversation's messages go: the stored conversation row, as plain data."""

    platform: str
    channel_id: str
    thread_id: str  # "" for a direct-message conversation answered at top level
    reference: Mapping[str, Any] | None  # Teams conversation reference; Slack: an assistant thread's

    @property
    def assistant(self) -> bool:
        """A Slack assistant thread (the AI app surface): status line and streamed answers instead of messages."""
        return self.platform == "slack" and bool(self.reference) and (self.reference or {}).get("surface") == ASSISTANT


#: Called with the answer message's id as soon as it exists (before a streamed answer is complete).
Created = Callable[[str], None]


@dataclass(frozen=True)
class OpenStream:
    """A Slack stream the turn's task updates opened (`message_id`), for the answer to continue; `tasks` are its
    tasks as last shown ({"id", "title", "status"})."""

    message_id: str
    tasks: tuple[dict[str, str], ...] = ()


class Outbound(Protocol):
    def post_status(self, to: Destination, text: str) -> str: ...

    def update_status(self, to: Destination, message_id: str, text: str) -> None: ...

    def set_thread_status(self, to: Destination, text: str) -> None: ...

    def stream_tasks(self, to: Destination, message_id: str | None, tasks: Sequence[Mapping[str, str]]) -> str: ...

    def post_answer(
        self,
        to: Destination,
        message_id: str | None,
        answer: Answer,
        created: Created | None = None,
        open_stream: OpenStream | None = None,
    ) -> str: ...

    def post_text(self, to: Destination, text: str) -> str: ...


#: Slack errors after which a retry cannot succeed.
SLACK_FINAL_ERRORS = frozenset(
    {"channel_not_found", "is_archived", "not_in_channel", "invalid_auth", "account_inactive", "token_revoked"}
)


class SlackOutbound:
    def __init__(self, poster: SlackPoster) -> None:
        self.poster = poster

    def post_status(self, to: Destination, text: str) -> str:
        with _slack_failures():
            return self.poster.post_status(to.channel_id, to.thread_id or None, text)

    def update_status(self, to: Destination, message_id: str, text: str) -> None:
        with _slack_failures():
            self.poster.update_status(to.channel_id, message_id, text)

    def set_thread_status(self, to: Destination, text: str) -> None:
        with _slack_failures():
            self.poster.set_thread_status(to.channel_id, to.thread_id, text)

    def stream_tasks(self, to: Destination, message_id: str | None, tasks: Sequence[Mapping[str, str]]) -> str:
        if not (to.assistant and to.thread_id):
            raise DeliveryFailed("task updates stream only in a Slack assistant thread", final=True)
        with _slack_failures():
            return self.poster.stream_tasks(
                to.channel_id, to.thread_id, message_id, [dict(t) for t in tasks], _stream_to(to)
            )

    def post_answer(
        self,
        to: Destination,
        message_id: str | None,
        answer: Answer,
        created: Created | None = None,
        open_stream: OpenStream | None = None,
    ) -> str:
        stream = None
        if to.assistant and to.thread_id:
            stream = _stream_to(to, created, open_stream)
        with _slack_failures():
            return self.poster.post_answer(to.channel_id, to.thread_id or None, message_id, answer, stream)

    def post_text(self, to: Destination, text: str) -> str:
        with _slack_failures():
            return self.poster.post_text(to.channel_id, to.thread_id or None, text)


def _stream_to(to: Destination, created: Created | None = None, open_stream: OpenStream | None = None) -> StreamTo:
    reference = to.reference or {}
    return StreamTo(
        str(reference.get("user_id") or ""),
        str(reference.get("team_id") or ""),
        created,
        ts=open_stream.message_id if open_stream else None,
        tasks=tuple(dict(t) for t in open_stream.tasks) if open_stream else (),
    )


@contextmanager
def _slack_failures() -> Iterator[None]:
    try:
        yield
    except SlackDeliveryError as exc:
        raise DeliveryFailed(str(exc), message_id=exc.answer_ts, final=exc.error in SLACK_FINAL_ERRORS) from exc


class TeamsOutbound:
    """TeamsPoster is asynchronous; a worker thread calls it through one event loop kept for this process."""

    def __init__(self, poster: TeamsPoster) -> None:
        self.poster = poster
        self._loop = asyncio.new_event_loop()
        self._lock = threading.Lock()

    def _run(self, coroutine: Any) -> Any:
        with self._lock:
            try:
                return self._loop.run_until_complete(coroutine)
            except TeamsDeliveryError as exc:  # connector and token failures alike; retried unless it cannot help
                raise DeliveryFailed(str(exc), final=exc.maybe_delivered or exc.permanent) from exc

    def post_status(self, to: Destination, text: str) -> str:
        return str(self._run(self.poster.post_status(_reference(to), text)))

    def update_status(self, to: Destination, message_id: str, text: str) -> None:
        self._run(self.poster.update_status(_reference(to), message_id, text))

    def set_thread_status(self, to: Destination, text: str) -> None:
        raise DeliveryFailed("Teams has no assistant threads", final=True)

    def stream_tasks(self, to: Destination, message_id: str | None, tasks: Sequence[Mapping[str, str]]) -> str:
        raise DeliveryFailed("Teams has no assistant threads", final=True)

    def post_answer(
        self,
        to: Destination,
        message_id: str | None,
        answer: Answer,
        created: Created | None = None,
        open_stream: OpenStream | None = None,
    ) -> str:
        return str(self._run(self.poster.post_answer(_reference(to), message_id, answer)))

    def post_text(self, to: Destination, text: str) -> str:
        return str(self._run(self.poster.post_text(_reference(to), text)))

    def close(self) -> None:
        with self._lock:
            self._loop.close()


def _reference(to: Destination) -> Mapping[str, Any]:
    if not to.reference:
        raise DeliveryFailed("the Teams conversation has no stored conversation reference", final=True)
    return to.reference


class Outbounds:
    """One outbound client per platform for this process, made on first use from the settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._clients: dict[str, Outbound] = {}
        self._lock = threading.Lock()

    def add(self, platform: str, client: Outbound) -> None:
        with self._lock:
            self._clients[platform] = client

    def for_platform(self, platform: str) -> Outbound:
        with self._lock:
            client = self._clients.get(platform)
            if client is None:
                client = self._make(platform)
                self._clients[platform] = client
            return client

    def _make(self, platform: str) -> Outbound:
        try:
            if platform == "slack":
                return SlackOutbound(SlackPoster.from_settings(self.settings))
            if platform == "teams":
                # Without an app id the poster sends unauthenticated (the Bot Framework Emulator's mode): real Teams
                # refuses that, so nothing is lost; inbound validation is the bot server's and is never off there.
                return TeamsOutbound(TeamsPoster(self.settings, testing=not self.settings.teams_app_id))
        except ConfigError as exc:
            raise DeliveryFailed(f"cannot post to {platform}: {exc}") from exc  # retried: it may be fixed
        raise DeliveryFailed(f"no chat platform named {platform!r}", final=True)

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                if isinstance(client, TeamsOutbound):
                    client.close()
            self._clients.clear()
