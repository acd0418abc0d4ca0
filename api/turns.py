"""Turns asked through the API or MCP: stored like a chat message (turn and job in one transaction), run by the
workers, read back as the typed answer.

An API conversation is the token user's own (platform `api`, the user as its workspace), so a follow-up in a
thread sees that user's earlier questions and nobody else's, and a turn id of another user reads as missing. How a
stored turn reaches a worker depends on the process: the bot server's outbox relay (`KickRelay`), a publish right
after the commit (`PublishNow`, `tablescout mcp` with Redis), or this process (`RunHere`, without Redis, as
`tablescout ask` does).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from api.errors import BadRequest, NotFound
from api.gateway import Gateway, Reader, visible_source
from api.models import AskRequest, TurnView
from bot.intake import EMPTY_NOTE, EMPTY_QUESTION, TURN_TASK
from bot.messages import parse_message, too_long
from bot.relay import Send, publish_pending
from core.access.tokens import Caller
from core.config.settings import Settings
from core.errors import TablescoutError
from core.store.database import Store
from core.store.models import Conversation, Turn
from core.store.repositories import outbox
from core.store.repositories import sources as source_repo
from core.store.repositories import turns as turn_repo

log = logging.getLogger(__name__)

API = "api"
POLL_S = 0.25
#: Status lines, naming a database or table only when the caller may see it.
STATUS = {
    "search_tables": ("Searching tables…", "Searching tables…"),
    "open_table_card": ("Reading {table}…", "Reading a table…"),
    "find_join_path": ("Finding how the tables join…", "Finding how the tables join…"),
    "list_tables": ("Listing tables of {database}…", "Listing tables…"),
    "run_sql": ("Running SQL on {database}…", "Running SQL…"),
    "save_note": ("Saving a note on {table}…", "Saving a note…"),
}


class Dispatch(Protocol):
    """How a stored turn reaches whatever runs it."""

    queues_jobs: bool

    def started(self, turn_id: int) -> None: ...


@dataclass
class KickRelay:
    """In the bot server: the outbox relay publishes the stored job; waking it is enough."""

    kick: Callable[[int], None]
    queues_jobs: bool = True

    def started(self, turn_id: int) -> None:
        self.kick(turn_id)


@dataclass
class PublishNow:
    """Publish pending jobs to the workers right after the commit (the relay's own step, run once)."""

    store: Store
    send: Send
    queues_jobs: bool = True

    def started(self, turn_id: int) -> None:
        publish_pending(self.store, self.send)


class RunHere:
    """No Redis: turns run in this process, one at a time, as `tablescout ask` runs them."""

    queues_jobs = False

    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings = settings
        self.store = store
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="tablescout-turn")
        self._environment: Any = None

    def started(self, turn_id: int) -> None:
        self._pool.submit(self._run, turn_id)

    def _run(self, turn_id: int) -> None:
        from workers.runtime import open_environment
        from workers.turns.engine import run_turn

        try:
            if self._environment is None:
                self._environment = open_environment(self.settings, self.store)
            run_turn(self._environment, turn_id)
        except Exception as exc:
            log.exception("turn %s could not run here", turn_id)
            # A TablescoutError says what to set up (no model configured); anything else stays in the log.
            reason = str(exc) if isinstance(exc, TablescoutError) else "the server log says why"
            with self.store.transaction() as session:
                turn_repo.fail_unstarted(session, turn_id, f"I cannot answer right now: {reason}.")


class TurnDesk:
    def __init__(self, gateway: Gateway, dispatch: Dispatch) -> None:
        self.gateway = gateway
        self.dispatch = dispatch

    def ask(self, caller: Caller, request: AskRequest) -> TurnView:
        refusal = too_long(request.question)
        if refusal is not None:
            raise BadRequest(refusal)
        with self.gateway.reading(caller) as r:
            labels = source_repo.labels(r.session)
            pins = list(dict.fromkeys(visible_source(r, name).name for name in request.databases))
            parsed = parse_message(request.question, labels=labels, bot_user_id=None)
            text = (parsed.note_text or "") if parsed.remember else parsed.text
            if not text.strip():
                raise BadRequest(EMPTY_NOTE if parsed.remember else EMPTY_QUESTION)
            thread = request.thread_id or uuid.uuid4().hex
            workspace = str(caller.user)
            continued = request.thread_id is not None
            if continued and not turn_repo.conversation_exists(
                r.session, platform=API, workspace_id=workspace, channel_id=API, thread_id=thread
            ):
                raise NotFound(f"there is no conversation {thread!r} of yours; leave thread_id out to start one")
            conversation = turn_repo.conversation(
                r.session, platform=API, workspace_id=workspace, channel_id=API, thread_id=thread, private=True
            )
            turn = turn_repo.create_turn(
                r.session,
                conversation.id,
                user_platform=caller.user.platform,
                user_id=caller.user.user_id,
                question=text.strip(),
                pins=list(dict.fromkeys([*pins, *parsed.pins])),
                intent="note" if parsed.remember else "question",
            )
            if self.dispatch.queues_jobs:
                outbox.queue_job(r.session, turn.id, {"task": TURN_TASK, "turn_id": turn.id})
            view = TurnView(turn_id=turn.id, thread_id=thread, status="queued", question=turn.question)
        self.dispatch.started(view.turn_id)
        return view

    def view(self, caller: Caller, turn_id: int) -> tuple[TurnView, str | None]:
        """The turn and, while it is unfinished, its status line; NotFound for a turn that is not the caller's."""
        with self.gateway.reading(caller) as r:
            turn, conversation = own_turn(r, turn_id)
            answer = turn_repo.answer_of(turn) if turn.status in turn_repo.FINISHED else None
            line = None if answer is not None else status_line(r, turn)
            view = TurnView(
                turn_id=turn.id,
                thread_id=conversation.thread_id,
                status=turn.status,
                question=turn.question,
                answer=answer,
            )
            return view, line

    async def wait(self, caller: Caller, turn_id: int, seconds: float) -> TurnView:
        """The turn once it is finished, or as it is after `seconds`."""
        give_up = time.monotonic() + seconds
        while True:
            view, _ = await asyncio.to_thread(self.view, caller, turn_id)
            if view.answer is not None or time.monotonic() >= give_up:
                return view
            await asyncio.sleep(POLL_S)


def own_turn(r: Reader, turn_id: int) -> tuple[Turn, Conversation]:
    turn = r.session.get(Turn, turn_id)
    conversation = r.session.get(Conversation, turn.conversation_id) if turn is not None else None
    mine = (
        turn is not None
        and conversation is not None
        and conversation.platform == API
        and (turn.user_platform, turn.user_id) == tuple(r.caller.user)
    )
    if not mine:
        raise NotFound(f"there is no turn {turn_id} of yours")
    assert turn is not None
    assert conversation is not None
    return turn, conversation


def status_line(r: Reader, turn: Turn) -> str:
    if turn.status == "queued":
        return "Waiting for a worker…"
    calls = turn_repo.tool_calls_of(r.session, turn.id)
    if not calls:
        return "Thinking…"
    arguments = calls[-1].arguments or {}
    named, plain = STATUS.get(calls[-1].tool, ("Thinking…", "Thinking…"))
    database = arguments.get("database")
    table = arguments.get("table")
    source = source_repo.by_name_or_alias(r.session, database) if isinstance(database, str) and database else None
    if source is None or not r.principal.may_see(source.name):
        return plain
    if "{table}" in named and not (
        isinstance(table, str) and r.principal.may_see(source.name, table.rpartition(".")[2])
    ):
        return plain
    return named.format(database=source.name, table=table)
