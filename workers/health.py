"""What a worker answers `tablescout health worker`: that its consumer is alive, and which configuration it uses.

A Celery inspect command, answered by the worker's main process through the broker. The configuration is the one
the worker's turns use (the file's last valid version, core.config.watch); when an edit of the file was invalid, the
answer says so and why, while turns keep running on the last valid version.
"""

from __future__ import annotations

from typing import Any

from celery.worker.control import inspect_command

from core.config.settings import Settings
from core.errors import ConfigError
from workers.startup import readiness

HEALTH_COMMAND = "tablescout_health"


def tablescout_health(state: Any, **_: Any) -> dict[str, Any]:
    """tablescout's health: pong, the state of the configuration file, and whether turns are ready to run (their
    encoders and model client loaded, workers.startup)."""
    try:
        config = Settings().config_state().health()
    except (ConfigError, ValueError) as exc:
        config = {"state": "invalid", "error": str(exc)}
    return {"ok": "pong", "config": config, "turns": readiness()}


inspect_command(name=HEALTH_COMMAND)(tablescout_health)
