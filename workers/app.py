"""The Celery app: `celery -A workers.app worker` (or `tablescout worker`). Redis is the broker; results are
never stored.

Delivery is at-least-once: a task is acknowledged after it finishes and is redelivered when a worker dies (after
the broker's visibility timeout), so every task must be idempotent and take ids rather than objects. The visibility
timeout is longer than any task's hard time limit, so a job that is still running is never handed out twice by the
broker; turns also hold a lease in the store for the rare case that it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from celery import Celery

from core.config.settings import Settings, load_settings
from core.errors import ConfigError
from workers.broker import TRANSPORT

ANALYSIS_HARD_LIMIT_S = 3600
#: A turn's job may outlive the turn's own deadline by this much (finishing, recording, posting).
TURN_LIMIT_MARGIN_S = 30
#: The broker waits this much longer than the longest hard limit before redelivering.
VISIBILITY_MARGIN_S = 10
#: kombu's Redis transport looks for a dead worker's jobs on a tick of this many seconds (its
#: `unacked_restore_interval`), scanning on every n-th tick (`unacked_restore_throttle`, 10 by default: every 100 s).
RESTORE_TICK_S = 10


def restore_throttle(visibility_s: int) -> int:
    """Ticks between scans for jobs past their visibility timeout: the scan period is at most a tenth of the timeout
    (never under one tick, never over kombu's 100 s), so a dead worker's job waits little more than its timeout."""
    return max(1, min(10, visibility_s // (10 * RESTORE_TICK_S)))


TURN_TASK = "tablescout.turns.run"
DIRECTORY_SYNC_TASK = "tablescout.directory.sync"
DELIVER_TASK = "tablescout.chat.deliver"
SWEEP_TASK = "tablescout.chat.sweep"
#: The sweep publishes outbox jobs a bot server did not (it stopped before its relay ran), retries answers and runs
#: again (or fails) turns whose job was lost (every `Settings.sweep_interval_s`).
SWEEP_EVERY_S = 30.0
#: Jobs that analyse or index sources: the analysis limits apply to them.
ANALYSIS_TASKS = (
    "tablescout.catalog.analyze_source",
    "tablescout.catalog.analyze_all",
    "tablescout.search.refine_source",
)
TASK_MODULES = [
    "workers.tasks.analysis",
    "workers.tasks.turns",
    "workers.tasks.directory",
    "workers.tasks.chat",
    "workers.health",  # the inspect command `tablescout health worker` asks
    "workers.startup",  # turns' encoders and model client are loaded when the worker starts
]
#: How long a prefork pool process may take to start: it loads the encoders first (Celery's default is 4 s).
PROCESS_START_LIMIT_S = 120.0

app = Celery("tablescout", include=TASK_MODULES)
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    result_backend=None,
    broker_connection_retry_on_startup=True,
    task_serializer="json",
    accept_content=["json"],
    worker_proc_alive_timeout=PROCESS_START_LIMIT_S,
    beat_schedule={
        "analyze-all-daily": {"task": "tablescout.catalog.analyze_all", "schedule": 24 * 3600.0},
        "directory-sync-hourly": {"task": DIRECTORY_SYNC_TASK, "schedule": 3600.0},
        "chat-outbox-sweep": {"task": SWEEP_TASK, "schedule": SWEEP_EVERY_S, "options": {"expires": SWEEP_EVERY_S}},
    },
)


def time_limits(settings: Settings) -> dict[str, Any]:
    """Hard and soft limits per task and the visibility timeout, all from the settings, consistent by design."""
    turn_hard = int(settings.turn_deadline_s) + TURN_LIMIT_MARGIN_S
    visibility = settings.worker_visibility_timeout_s
    if visibility <= turn_hard + VISIBILITY_MARGIN_S:
        raise ConfigError(
            f"TABLESCOUT_WORKER_VISIBILITY_TIMEOUT_S ({visibility}) must exceed the turn deadline plus "
            f"{TURN_LIMIT_MARGIN_S + VISIBILITY_MARGIN_S} s ({turn_hard + VISIBILITY_MARGIN_S})"
        )
    analysis_hard = min(ANALYSIS_HARD_LIMIT_S, visibility - VISIBILITY_MARGIN_S)
    analysis = {"time_limit": analysis_hard, "soft_time_limit": max(analysis_hard - 60, analysis_hard // 2)}
    annotations: dict[str, dict[str, int]] = {name: analysis for name in ANALYSIS_TASKS}
    annotations[TURN_TASK] = {"time_limit": turn_hard, "soft_time_limit": turn_hard - 10}
    return {"visibility_timeout": visibility, "annotations": annotations}


def configure(settings: Settings) -> None:
    limits = time_limits(settings)
    app.conf.task_annotations = limits["annotations"]
    visibility = limits["visibility_timeout"]
    app.conf.broker_transport_options = {
        "visibility_timeout": visibility,
        "unacked_restore_interval": RESTORE_TICK_S,
        "unacked_restore_throttle": restore_throttle(visibility),
    }
    app.conf.broker_transport = TRANSPORT  # kombu's Redis transport, reconnecting after a broker restart
    app.conf.beat_schedule["chat-outbox-sweep"] |= {
        "schedule": settings.sweep_interval_s,
        "options": {"expires": settings.sweep_interval_s},
    }
    if settings.redis_url is not None:
        app.conf.broker_url = settings.redis_url.get_secret_value()


F = TypeVar("F", bound=Callable[..., Any])


def task(name: str, **options: Any) -> Callable[[F], Any]:
    """Declare a task the one way tablescout does: explicit dotted name, late ack, limits from the settings."""
    if not name.startswith("tablescout."):
        raise ValueError(f"task names start with 'tablescout.': {name}")

    def register(function: F) -> Any:
        return app.task(name=name, bind=False, acks_late=True, reject_on_worker_lost=True, **options)(function)

    return register


configure(load_settings())
