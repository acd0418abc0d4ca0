"""The run order of tests/conftest.py names files that exist, so it keeps balancing the test processes."""

from __future__ import annotations

from tests.conftest import LONG_FILES
from tests.support import REPO


def test_every_long_file_named_first_exists_once() -> None:
    missing = [path for path in LONG_FILES if not (REPO / path).is_file()]
    assert missing == []
    assert len(set(LONG_FILES)) == len(LONG_FILES)
