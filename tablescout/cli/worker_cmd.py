"""`tablescout worker`: a Celery worker running turns and analysis jobs from Redis."""

from __future__ import annotations

from typing import Annotated

import typer

from core.errors import ConfigError
from tablescout.cli.context import settings


def worker(
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, max=256, help="Turns at once.")] = 8,
    pool: Annotated[
        str, typer.Option("--pool", help="threads (default: turns mostly wait on the model), prefork or solo.")
    ] = "threads",
    loglevel: Annotated[str, typer.Option("--loglevel", help="debug, info, warning or error.")] = "info",
    beat: Annotated[
        bool, typer.Option("--beat", help="Also run the schedule (daily re-analysis); one per install.")
    ] = False,
) -> None:
    """Run a worker: `celery -A workers.app worker` with tablescout's settings checked first."""
    from workers.models.registry import describe_model_setup, provider_from_settings

    config = settings()
    if config.redis_url is None:
        raise ConfigError("TABLESCOUT_REDIS_URL is not set; a worker takes its jobs from Redis")
    if provider_from_settings(config) is None:
        raise ConfigError("no model is configured for the turns this worker would run; " + describe_model_setup())
    if pool not in ("threads", "prefork", "solo"):
        raise ConfigError(f"--pool must be threads, prefork or solo, not {pool!r}")
    from workers.app import app

    argv = ["worker", f"--concurrency={concurrency}", f"--pool={pool}", f"--loglevel={loglevel}"]
    if beat:
        argv.append("--beat")
    app.worker_main(argv)
