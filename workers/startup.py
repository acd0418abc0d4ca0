"""Opening what turns need when a worker process starts, before it takes its first job, and saying when it is ready.

Loading the embedding model (and the reranker) takes seconds; done on the first job, it held up that turn's first
status message. So the worker opens the turn environment (metadata store, encoders, model client) at start: with
the threads and solo pools in the worker process on `celeryd_after_setup` (logging is set up, the consumer not yet
started: no job is taken and no health probe is answered until it is done); with prefork in each pool process on
`worker_process_init`, before the pool hands it a job (workers.app gives pool processes `PROCESS_START_LIMIT_S` to
start, not Celery's 4 s). `readiness()` is what `tablescout health worker` reports: "ready" only once loaded.
Only workers load encoders; the bot server never imports this module.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery.signals import celeryd_after_setup, worker_process_init

from core.errors import TablescoutError

log = logging.getLogger(__name__)

_lock = threading.Lock()
_state: dict[str, Any] = {"state": "starting"}


def readiness() -> dict[str, Any]:
    """{"state": "starting" | "loading" | "ready" | "failed", "error"?: why, "load_s"?: how long loading took}."""
    with _lock:
        return dict(_state)


def _set(**values: Any) -> None:
    with _lock:
        _state.clear()
        _state.update(values)


def preload() -> None:
    """Open the turn environment and run the embedder once, so the first turn finds everything loaded. A failure is
    logged and reported as not ready; turns then try again on their own (and fail with the reason if they must)."""
    from workers import runtime

    _set(state="loading")
    log.info("loading the encoders and the model client before taking jobs")
    started = time.monotonic()
    try:
        env = runtime.environment()
        env.encoders.embedder.embed(["warm up"])  # the first call initialises the inference runtime
    except TablescoutError as exc:
        log.error("this worker cannot run turns: %s", exc)
        _set(state="failed", error=str(exc))
        return
    seconds = round(time.monotonic() - started, 2)
    _set(state="ready", load_s=seconds)
    log.info("turns ready: encoders and model client loaded in %.1f s", seconds)


def _on_worker_setup(instance: Any = None, **_: Any) -> None:
    pool = str(getattr(instance, "pool_cls", "") or "").lower()
    if "prefork" in pool or pool.endswith("processes"):
        # Each pool process loads its own before its first job; the main process only answers probes.
        _set(state="ready", detail="each pool process loads the encoders before its first job")
        return
    preload()


def _on_process_init(**_: Any) -> None:
    if readiness().get("state") != "ready" or "detail" in readiness():
        preload()


celeryd_after_setup.connect(_on_worker_setup, weak=False)
worker_process_init.connect(_on_process_init, weak=False)
