from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.store.embedded import EmbeddedServer
from tests.conftest import create_scratch_database
from tests.support import run_cli


@dataclass
class Cli:
    """The real `tablescout` command in one installation; its store is a fresh database on the test server."""

    home: Path
    env: dict[str, str] = field(default_factory=dict)

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_cli(self.home, *args, env={**self.env, **(env or {})})


@pytest.fixture
def cli(home: Path, store_server: EmbeddedServer) -> Cli:
    url = create_scratch_database(store_server.url, "ts_cli", migrated=True)  # `init` finds it current
    return Cli(home=home, env={"TABLESCOUT_DATABASE_URL": url.render_as_string(hide_password=False)})


@pytest.fixture
def fresh_cli(home: Path, store_server: EmbeddedServer) -> Cli:
    """Like `cli`, on an empty database no migration has run on: for what a first `init` does."""
    url = create_scratch_database(store_server.url, "ts_cli")
    return Cli(home=home, env={"TABLESCOUT_DATABASE_URL": url.render_as_string(hide_password=False)})
