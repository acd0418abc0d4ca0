"""The turn job: thin and idempotent, it takes a turn id, lets the engine run it and, for a chat turn, posts the
status message while it runs and the one answer when it is done (bot/delivery.py)."""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_process_shutdown, worker_shutdown

from bot.delivery import StatusReporter, destination
from bot.outbound import DeliveryFailed
from core.errors import StoreUnavailable, TablescoutError
from core.store.database import connection_lost
from core.store.models import Turn
from workers import runtime
from workers.app import TURN_TASK, task
from workers.tasks.chat import deliver_now
from workers.turns.engine import run_turn
from workers.turns.state import Progress, TurnEnvironment, TurnOutcome

log = logging.getLogger(__name__)

#: A job that finds its turn leased by a live attempt looks again after the lease ends, at most this many times.
MAX_WAITS = 3
#: The status message a queued chat turn shows first; the engine's first progress line is the same, so it is not
#: posted twice.
FIRST_STATUS = "Thinking…"
#: A chat user's answer when this worker cannot run turns at all; the reason (e.g. no model) is in the worker's log.
CANNOT_RUN = "I cannot answer right now: I am not set up to answer questions yet; the operator can see why in the log."


def _status_reporter(turn_id: int) -> Progress | None:
    """The turn's status message, already showing FIRST_STATUS when the turn is still queued (a job redelivered for
    a turn that runs or has finished posts nothing new)."""
    store = runtime.store()
    with store.transaction() as session:
        to = destination(session, turn_id)
        turn = session.get(Turn, turn_id)
        queued = turn is not None and turn.status == "queued"
    if to is None:
        return None
    try:
        outbound = runtime.outbounds().for_platform(to.platform)
    except DeliveryFailed as exc:
        log.warning("turn %s: no status messages: %s", turn_id, exc)
        return None
    reporter = StatusReporter(store, outbound, to, turn_id)
    if queued:
        reporter(FIRST_STATUS)  # before anything that can take time
    return reporter


def _run_once_the_store_answers(env: TurnEnvironment, turn_id: int, progress: Progress | None) -> TurnOutcome | None:
    """Run the turn; when the metadata store goes away mid-turn, bring it back (start the embedded one again) and
    run the turn again here, under the same lease. None when it does not come back: the sweep runs the turn later."""
    try:
        return run_turn(env, turn_id, progress)
    except Exception as exc:
        if not connection_lost(exc):
            raise
        log.warning("turn %s: lost the metadata store mid-turn (%s); running it again once it is back", turn_id, exc)
    try:
        runtime.revive_store()
    except TablescoutError as exc:
        log.error("turn %s: the metadata store is not back (%s); the sweep runs the turn again later", turn_id, exc)
        return None
    return run_turn(env, turn_id, progress)


@task(TURN_TASK)
def run_turn_job(turn_id: int, waits: int = 0) -> None:
    try:
        progress = _status_reporter(turn_id)
        env = runtime.environment()
    except StoreUnavailable as exc:  # nothing can be recorded now; the sweep runs the turn once the store is back
        log.error("turn %s cannot start: %s", turn_id, exc)
        return
    except TablescoutError as exc:  # e.g. no model configured: the turn fails with the reason, once
        log.error("turn %s cannot run on this worker: %s", turn_id, exc)
        runtime.fail_turn(turn_id, CANNOT_RUN)
        deliver_now(turn_id)
        return
    outcome = _run_once_the_store_answers(env, turn_id, progress)
    if outcome is None:
        return
    log.info("turn %s: %s%s", turn_id, outcome.outcome, f" ({outcome.status})" if outcome.status else "")
    if outcome.outcome in ("finished", "already_finished"):
        deliver_now(turn_id)  # nothing happens when it was delivered already or is not a chat turn
    elif outcome.outcome == "busy" and waits < MAX_WAITS:
        # Another attempt holds the lease. If it dies, this look after its lease ends takes the turn over.
        log.info("turn %s is running elsewhere; looking again in %.0f s", turn_id, outcome.retry_in_s)
        run_turn_job.apply_async((turn_id, waits + 1), countdown=outcome.retry_in_s + 1)
    elif outcome.outcome in ("missing", "lost_lease"):
        log.warning("turn %s: %s", turn_id, outcome.outcome)


def _close_runtime(**_: Any) -> None:
    runtime.close()


worker_process_shutdown.connect(_close_runtime, weak=False)
worker_shutdown.connect(_close_runtime, weak=False)
