"""The embedded store's shared buffers: sized from the machine's memory, in effect from the first start on."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import URL, create_engine, text

from core.store.embedded import _prepare, memory_bytes, shared_buffers_mb, start_embedded


@pytest.mark.parametrize(
    ("memory_gb", "expected_mb"),
    [(0.25, 128), (1, 256), (2, 512), (4, 1024), (64, 1024)],
)
def test_a_quarter_of_the_memory_within_postgresqls_default_and_1_gb(memory_gb: float, expected_mb: int) -> None:
    assert shared_buffers_mb(int(memory_gb * 2**30)) == expected_mb


def _shared_buffers_mb(url: URL) -> int:
    """The server's shared_buffers in MB, as it runs now."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(
                conn.scalar(text("SELECT setting::bigint * 8 / 1024 FROM pg_settings WHERE name = 'shared_buffers'"))
            )
    finally:
        engine.dispose()


def test_a_new_store_runs_with_its_buffers_from_the_first_start(tmp_path: Path) -> None:
    wanted = shared_buffers_mb(memory_bytes())
    server = start_embedded(tmp_path / "pgdata")
    try:
        assert _shared_buffers_mb(server.url) == wanted
        assert not _prepare(server.url, wanted)  # already written: nothing to change at the next start
    finally:
        server.stop()
    again = start_embedded(tmp_path / "pgdata")
    try:
        assert _shared_buffers_mb(again.url) == wanted
    finally:
        again.stop()
