from __future__ import annotations

from collections.abc import Iterator

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, create_engine, inspect, text

from core.errors import StoreError
from core.store import migrate
from core.store.embedded import EmbeddedServer
from core.store.models import Base
from tests.conftest import create_scratch_database


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
