"""Shared fixtures: one embedded metadata store per test session, a rolled-back transaction per test."""

from __future__ import annotations

import os
import sys
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import URL, create_engine, text
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from core.store import migrate
from core.store.database import Store, open_store
from core.store.embedded import EmbeddedServer, start_embedded
from tests.support import isolated_settings

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

# The fake model servers (`fake_anthropic`, `fake_openai`) and the turn worlds are fixtures for every test folder.
pytest_plugins = ["tests.fakes.fixtures", "tests.turn_world"]

# Bytecode caches on, whatever the shell says: the suite starts hundreds of Python processes (the command line,
# workers, bot servers), and with PYTHONDONTWRITEBYTECODE set and an installation without caches (pip's
# --no-compile) each of them compiled every module it imported again, about 2 s a process on 2 cores.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Tests describe their own environment; nothing from the developer's shell may leak into them.
for _name in [k for k in os.environ if k.startswith("TABLESCOUT_")]:
    del os.environ[_name]
# One exception: installations index without the second (multilingual) vectors, which cost every analysis a few
# seconds; the tests of those vectors (tests/search/test_multilingual.py) turn them on for their installations.
os.environ["TABLESCOUT_MULTILINGUAL_VECTORS"] = "false"

#: The longest test files (about a minute or more each on 2 cores, from `--durations`), longest first. They are
#: handed to the test processes before every other file, so that no process is left running one of them alone at
#: the end while the others wait (each file runs whole on one process: `--dist loadfile`). Order only: every test
#: runs. tests/test_conftest_order.py checks that each path still names a file.
LONG_FILES = (
    "tests/workers/models/local/test_local_model_turn.py",
    "tests/workers/turns/test_turn_worker.py",
    "tests/catalog/test_sample_erp.py",
    "tests/cli/test_analyze.py",
    "tests/workers/test_turn_sweep.py",
    "tests/e2e/test_slack_chat.py",
    "tests/workers/sql/test_row_filter_corpus.py",
    "tests/cli/test_source.py",
    "tests/cli/test_turn_cmds.py",
    "tests/workers/turns/test_viewer_cards.py",
    "tests/deploy/test_health_cmd.py",
    "tests/cli/test_startup_imports.py",
    "tests/search/test_encoders.py",
    "tests/workers/sql/test_readonly.py",
    "tests/e2e/test_slack_assistant.py",
    "tests/cli/test_source_alias.py",
    "tests/cli/test_note_cmd.py",
    "tests/deploy/test_sample_loader.py",
    "tests/workers/sql/test_row_filters.py",
    "tests/workers/test_store_restart.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the files of LONG_FILES first, longest first; the rest keep their order (a stable sort)."""
    rank = {path: position for position, path in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(LONG_FILES)))


@pytest.fixture(scope="session")
def store_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """The embedded PostgreSQL 16 + pgvector the tests share (the same code path as the product default)."""
    server = start_embedded(tmp_path_factory.mktemp("store") / "pgdata")
    yield server
    server.stop()


#: Per test process and server: a database the migrations were applied to once, copied by CREATE DATABASE ...
#: TEMPLATE for stores that need not be migrated by the code under test.
_MIGRATED: dict[str, str] = {}


def _migrated_template(server_url: URL) -> str:
    key = server_url.render_as_string(hide_password=False)
    if key not in _MIGRATED:
        url = create_scratch_database(server_url, "ts_template")
        engine = create_engine(url, poolclass=NullPool)  # no connection may stay open on a template
        migrate.upgrade(engine)
        engine.dispose()
        _MIGRATED[key] = str(url.database)
    return _MIGRATED[key]


def create_scratch_database(server_url: URL, prefix: str, *, migrated: bool = False) -> URL:
    """A new, empty database on the server; with `migrated`, a copy of one every migration has run on (about a
    second less than migrating it: for tests where `tablescout init` or a fixture only needs a current store, not
    the tests of the migrations or of `init` itself)."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    template = f' TEMPLATE "{_migrated_template(server_url)}"' if migrated else ""
    engine = create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"{template}'))
    engine.dispose()
    return server_url.set(database=name)


@pytest.fixture(scope="session")
def store(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """A migrated store in its own database; migrations run once per session."""
    url = create_scratch_database(store_server.url, "ts_test")
    settings = isolated_settings(tmp_path_factory.mktemp("home"), database_url=url.render_as_string(False))
    opened = open_store(settings)
    migrate.upgrade(opened.engine)
    yield opened
    opened.close()


@pytest.fixture
def session(store: Store) -> Iterator[Session]:
    """A session whose work is rolled back after the test, even where the code under test commits."""
    with store.engine.connect() as conn:
        outer = conn.begin()
        db = Session(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            yield db
        finally:
            db.close()
            outer.rollback()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path
