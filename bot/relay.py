"""The outbox relay: publishes stored turn jobs to Celery, by task name, after the transaction that stored them.

Publishing happens after commit, so a job can never point at a turn that does not exist. A job published twice
(the relay died between publishing and marking it sent) is harmless: a turn runs once under its lease and a finished
turn is never run again. The bot server kicks the relay after each stored message; a periodic sweep catches the rest.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from core.store.database import Store
from core.store.repositories import outbox
from core.store.repositories.turns import now

log = logging.getLogger(__name__)

Send = Callable[[str, Sequence[Any]], None]
BATCH = 100
SWEEP_S = 1.0


def publish_pending(store: Store, send: Send, limit: int = BATCH) -> int:
    """Publish up to `limit` pending jobs (oldest first, rows locked so two relays never publish the same one)."""
    with store.transaction() as session:
        rows = outbox.pending_jobs(session, limit)
        for row in rows:
            row.attempts += 1
            send(str(row.payload["task"]), [row.payload["turn_id"]])
            row.status = "sent"
            row.sent_at = now()
        return len(rows)


class Relay:
    """A background thread that publishes pending jobs when kicked, and every `SWEEP_S` seconds regardless."""

    def __init__(self, store: Store, send: Send) -> None:
        self.store = store
        self.send = send
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tablescout-relay", daemon=True)

    def start(self) -> Relay:
        self._thread.start()
        return self

    def kick(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(SWEEP_S)
            self._wake.clear()
            try:
                while publish_pending(self.store, self.send) == BATCH:
                    pass
            except Exception:  # the broker or the store is away: keep the rows pending and try again
                log.exception("outbox relay could not publish; will retry")
