"""The Celery app: `celery -A workers.app worker`. Redis is the broker; results are never stored.

Delivery is at-least-once: a task is acknowledged after it finishes and is redelivered when a worker dies, so
every task must be idempotent and take ids rather than objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from celery import Celery

from core.settings import load_settings

HARD_TIME_LIMIT_S = 3600
SOFT_TIME_LIMIT_S = 3300

app = Celery("tablescout", include=["workers.tasks.analysis"])
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    result_backend=None,
    task_time_limit=HARD_TIME_LIMIT_S,
    task_soft_time_limit=SOFT_TIME_LIMIT_S,
    broker_transport_options={"visibility_timeout": HARD_TIME_LIMIT_S + 600},
    broker_connection_retry_on_startup=True,
    task_serializer="json",
    accept_content=["json"],
    beat_schedule={
        "analyze-all-daily": {"task": "tablescout.catalog.analyze_all", "schedule": 24 * 3600.0},
    },
)


def configure_from_settings() -> None:
    settings = load_settings()
    if settings.redis_url is not None:
        app.conf.broker_url = settings.redis_url.get_secret_value()


F = TypeVar("F", bound=Callable[..., Any])


def task(name: str, **options: Any) -> Callable[[F], Any]:
    """Declare a task the one way tablescout does: explicit dotted name, late ack, limits from the app."""
    if not name.startswith("tablescout."):
        raise ValueError(f"task names start with 'tablescout.': {name}")

    def register(function: F) -> Any:
        return app.task(name=name, bind=False, acks_late=True, reject_on_worker_lost=True, **options)(function)

    return register


configure_from_settings()
