from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, create_engine, inspect, text

from core.errors import StoreError
from core.store import migrate
from core.store.embedded import EmbeddedServer
from core.store.models import Base
from tests.conftest import create_scratch_database
from tests.support import REPO


@pytest.fixture
def fresh_engine(store_server: EmbeddedServer) -> Iterator[Engine]:
    engine = create_engine(create_scratch_database(store_server.url, "ts_migr"))
    yield engine
    engine.dispose()


def test_upgrade_creates_vector_extension_and_matches_models(fresh_engine: Engine) -> None:
    with pytest.raises(StoreError, match="not initialised"):
        migrate.require_current(fresh_engine)
    migrate.upgrade(fresh_engine)
    migrate.require_current(fresh_engine)
    with fresh_engine.connect() as conn:
        assert conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).scalar() == 1
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    assert set(Base.metadata.tables) <= set(inspect(fresh_engine).get_table_names())


def test_downgrade_to_base_and_upgrade_again(fresh_engine: Engine) -> None:
    migrate.upgrade(fresh_engine)
    migrate.downgrade(fresh_engine, "base")
    assert migrate.current_revision(fresh_engine) is None
    remaining = set(inspect(fresh_engine).get_table_names()) - {"alembic_version"}
    assert remaining == set()
    with fresh_engine.connect() as conn:
        assert conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).first() is None
    migrate.upgrade(fresh_engine)
    assert migrate.current_revision(fresh_engine) == migrate.head_revision()


def test_every_revision_downgrades_one_step(fresh_engine: Engine) -> None:
    from alembic.script import ScriptDirectory

    revisions = list(reversed(list(ScriptDirectory.from_config(migrate.alembic_config()).walk_revisions())))
    for revision in revisions:
        migrate.upgrade(fresh_engine, revision.revision)
        migrate.downgrade(fresh_engine, str(revision.down_revision or "base"))
        migrate.upgrade(fresh_engine, revision.revision)
    assert migrate.current_revision(fresh_engine) == migrate.head_revision()


def test_scripted_head_is_the_head_alembic_computes() -> None:
    assert migrate.scripted_head(migrate.MIGRATIONS / "versions") == migrate.alembic_head_revision()
    assert migrate.head_revision() == migrate.alembic_head_revision()
    # A new migration's revision must be written into migrate.HEAD_REVISION too (the light commands' check).
    assert migrate.alembic_head_revision() == migrate.HEAD_REVISION


def _script(directory: Path, name: str, body: str) -> None:
    (directory / name).write_text('"""A migration."""\n\n' + body + "\n\n\ndef upgrade() -> None:\n    pass\n")


def test_scripted_head_follows_down_revisions_and_merges(tmp_path: Path) -> None:
    _script(tmp_path, "a_0001.py", 'revision: str = "0001"\ndown_revision: str | None = None')
    _script(tmp_path, "b_0002.py", 'revision = "0002"\ndown_revision = "0001"')
    _script(tmp_path, "c_0003.py", 'revision = "0003"\ndown_revision = "0001"')
    _script(tmp_path, "d_0004.py", 'revision = "0004"\ndown_revision = ("0002", "0003")')
    (tmp_path / "__init__.py").write_text('revision = "init"\n')
    (tmp_path / ".#d_0005.py").write_text('revision = "lock"\n')
    assert migrate.scripted_head(tmp_path) == "0004"


@pytest.mark.parametrize(
    "scripts",
    [
        {},  # no scripts
        {"b.py": 'revision = "0002"\ndown_revision = "0001"', "c.py": 'revision = "0003"\ndown_revision = "0001"'},
        {"a.py": "revision = make_id()\ndown_revision = None"},
        {"a.py": 'revision = "0001"\ndown_revision = PREVIOUS'},
        {"a.py": "down_revision = None"},
        {"a.py": "revision = ("},
    ],
    ids=["empty", "two-heads", "computed-revision", "computed-down", "no-revision", "syntax-error"],
)
def test_scripted_head_leaves_unclear_scripts_to_alembic(tmp_path: Path, scripts: dict[str, str]) -> None:
    for name, body in scripts.items():
        (tmp_path / name).write_text(body + "\n")
    assert migrate.scripted_head(tmp_path) is None


def test_several_stored_revisions_are_refused(fresh_engine: Engine) -> None:
    migrate.upgrade(fresh_engine)
    with fresh_engine.begin() as conn:
        conn.execute(text("INSERT INTO alembic_version (version_num) VALUES ('other')"))
    with pytest.raises(StoreError, match="several revisions"):
        migrate.require_current(fresh_engine)


def test_checking_and_upgrading_a_current_store_does_not_load_alembic(fresh_engine: Engine) -> None:
    migrate.upgrade(fresh_engine)
    program = (
        "import sys\n"
        "from sqlalchemy import create_engine\n"
        "from core.store import migrate\n"
        "engine = create_engine(sys.argv[1])\n"
        "migrate.require_current(engine)\n"
        "migrate.upgrade(engine)\n"
        "print(migrate.current_revision(engine), sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))\n"
    )
    url = fresh_engine.url.render_as_string(hide_password=False)
    done = subprocess.run(
        [sys.executable, "-c", program, url], capture_output=True, text=True, cwd=REPO, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [migrate.head_revision(), "[]"]
