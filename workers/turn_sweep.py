"""Finding turns that would never be answered, and running them again or failing them honestly (SPEC §8).

A turn's job can be lost where neither the broker nor the lease brings it back: Redis flushed or restarted empty
after the job was published (the turn stays `queued`), a worker that died together with its Redis message, or a
turn whose metadata store went away mid-turn, so its job ended (and was acknowledged) without an answer (the turn
stays `running` under a lease nobody renews). The sweep, on the beat schedule, finds turns queued longer than
`turn_requeue_after_s` and running turns whose lease ended `turn_lease_grace_s` ago, and publishes their job again;
a turn already tried `turn_max_tries` times fails instead, with a message that says why. Either way the user gets
exactly one answer: the lease lets only one attempt record it, and a failed chat turn's message goes through the
same answer outbox row, which replaces the status message in the thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from core.config.settings import Settings
from core.store.database import Store
from core.store.models import Turn
from core.store.repositories import turns as turn_repo

log = logging.getLogger(__name__)

#: Turns handled per sweep; the next sweep takes the rest.
BATCH = 100

#: Publishes turn `turn_id`'s job.
Publish = Callable[[int], None]


@dataclass
class TurnSweep:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def tries(turn: Turn) -> int:
    """How often the turn was tried: each publish of its job (the first, and each requeue), or each claim of it
    (a broker redelivery claims without a publish), whichever is more."""
    return max(turn.attempts, turn.requeues + 1)


def give_up_message(turn: Turn, settings: Settings) -> str:
    """What the user reads when the turn is failed: why, in their terms; no hosts, no internals."""
    if turn.attempts == 0:
        waited = settings.turn_requeue_after_s * tries(turn)
        return (
            f"I could not start on this question: no worker took it up within {waited:.0f} s (its job was lost, "
            "or every worker is busy). Please ask again."
        )
    count = tries(turn)
    return (
        f"I could not finish this answer: the work on it was cut off {count} time{'s' if count != 1 else ''} "
        "before it was done (a worker, the message queue or the metadata store went away). Please ask again."
    )


def sweep_turns(store: Store, settings: Settings, publish: Publish, limit: int = BATCH) -> TurnSweep:
    """Publish again, or fail, each unfinished turn whose job was lost. Publishing happens while the turns are still
    locked and before the transaction commits, so when the broker is away nothing is counted and the next sweep
    tries again."""
    at = turn_repo.now()
    queued_before = at - timedelta(seconds=settings.turn_requeue_after_s)
    lease_ended_before = at - timedelta(seconds=settings.turn_lease_grace_s)
    done = TurnSweep()
    with store.transaction() as session:
        stale = turn_repo.stale_turns(
            session, queued_before=queued_before, lease_ended_before=lease_ended_before, limit=limit
        )
        for turn in stale:
            was = turn.status
            if tries(turn) >= settings.turn_max_tries:
                message = give_up_message(turn, settings)
                log.warning("turn %s (%s, tried %d times) lost its job again: failed", turn.id, was, tries(turn))
                turn_repo.fail_unstarted(session, turn.id, message)
                done.failed.append(turn.id)
            else:
                log.warning("turn %s (%s, tried %d times) lost its job: queued again", turn.id, was, tries(turn))
                turn_repo.requeue(turn)
                done.requeued.append(turn.id)
        session.flush()
        for turn_id in done.requeued:
            publish(turn_id)
    return done
