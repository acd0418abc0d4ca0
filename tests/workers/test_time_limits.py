"""The limits a worker runs under, all from the settings: a turn's hard limit past its deadline, the broker's
visibility timeout past that, and how often the broker looks for jobs of dead workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ConfigError
from tests.support import isolated_settings
from workers.app import RESTORE_TICK_S, TURN_TASK, restore_throttle, time_limits


def test_the_visibility_timeout_must_outlast_a_turns_hard_limit(tmp_path: Path) -> None:
    limits = time_limits(isolated_settings(tmp_path, turn_deadline_s=5, worker_visibility_timeout_s=46))
    assert limits["visibility_timeout"] == 46
    assert limits["annotations"][TURN_TASK] == {"time_limit": 35, "soft_time_limit": 25}
    with pytest.raises(
        ConfigError, match=r"VISIBILITY_TIMEOUT_S \(45\) must exceed the turn deadline plus 40 s \(45\)"
    ):
        time_limits(isolated_settings(tmp_path, turn_deadline_s=5, worker_visibility_timeout_s=45))


@pytest.mark.parametrize(
    ("visibility_s", "scan_every_s"),
    [(46, 10), (199, 10), (200, 20), (500, 50), (1000, 100), (4200, 100)],
)
def test_jobs_of_dead_workers_are_looked_for_within_a_tenth_of_the_visibility_timeout(
    visibility_s: int, scan_every_s: int
) -> None:
    assert restore_throttle(visibility_s) * RESTORE_TICK_S == scan_every_s
