"""Chat delivery jobs: retrying an answer that could not be posted, and the periodic sweep.

A turn job posts its own answer right after the turn finishes (workers/tasks/turns.py); these tasks cover what
went wrong: a platform that was rate limiting past its retries or down for a while (`tablescout.chat.deliver`, with
backoff), a bot server that stored a message but stopped before its relay published the job, and a job the broker
or a dying worker lost (the sweep, on the beat schedule: it publishes stored jobs, runs again or fails turns whose
job was lost (workers/turn_sweep.py), and delivers answers still pending).
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError

from bot.delivery import deliver_answer, pending_answers
from bot.relay import publish_pending
from core.config.settings import load_settings
from core.errors import StoreUnavailable, TablescoutError
from core.store.database import Store, connection_lost, error_line
from workers import runtime
from workers.app import DELIVER_TASK, SWEEP_TASK, TURN_TASK, app, task
from workers.turn_sweep import sweep_turns

log = logging.getLogger(__name__)

#: An answer still pending this long after its last attempt is picked up by the sweep (a lost retry job).
STALE_ANSWER_S = 120.0


def deliver_now(turn_id: int) -> None:
    """Deliver turn `turn_id`'s answer; on a retryable failure schedule the next attempt."""
    try:
        result = deliver_answer(runtime.store(), runtime.outbounds(), turn_id)
    except TablescoutError as exc:
        log.error("turn %s: answer delivery could not start: %s", turn_id, exc)
        return
    if result.outcome == "retry":
        deliver_answer_job.apply_async((turn_id,), countdown=result.retry_in_s)
    elif result.outcome == "delivered":
        log.info("turn %s: answer delivered (%s)", turn_id, result.message_id)


@task(DELIVER_TASK)
def deliver_answer_job(turn_id: int) -> None:
    deliver_now(turn_id)


@task(SWEEP_TASK)
def sweep_outbox() -> None:
    try:
        _sweep(runtime.store())  # the store: started again when the embedded one died
    except StoreUnavailable as exc:
        log.warning("outbox sweep skipped: %s", exc)
    except SQLAlchemyError as exc:  # the store went away during the sweep: the next one does it all again
        if not connection_lost(exc):
            raise
        log.warning("outbox sweep cut off: the metadata store went away (%s)", error_line(exc))


def _sweep(store: Store) -> None:
    published = publish_pending(store, lambda name, args: app.send_task(name, args=list(args)))
    if published:
        log.info("outbox sweep published %d stored job(s)", published)
    swept = sweep_turns(store, load_settings(), lambda turn_id: app.send_task(TURN_TASK, args=[turn_id]))
    for turn_id in swept.failed:  # their user reads why now, in place of the status message
        deliver_answer_job.delay(turn_id)
    for turn_id in pending_answers(store, STALE_ANSWER_S):
        if turn_id not in swept.failed:
            deliver_answer_job.delay(turn_id)
