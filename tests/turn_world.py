"""An analysed and indexed sample installation for turn tests (fixtures `turn_world`, `mariadb_turn_world`, registered
for every test folder by tests/conftest.py), with roles, directory users and a way to run turns
against a fake model server (the real SDKs speak to it over HTTP)."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, delete, func, select, text

from catalog.analysis import AnalysisOptions
from catalog.sample_erp import load_into
from core.config.settings import Settings
from core.store.embedded import EmbeddedServer
from core.store.models import Note, Turn
from core.store.repositories import directory
from core.store.repositories import turns as turn_repo
from search.encoders import BiEncoderReranker
from search.service import Encoders
from tests.catalog.analysis_support import Installation, new_installation
from tests.fakes.model_server import FakeAnthropicServer, FakeModelServer
from tests.support import MARIADB_SERVER, default_embedder, isolated_settings, sample_databases
from workers.catalog_refresh import refresh_source
from workers.models.registry import provider_from_settings
from workers.turns.engine import run_turn
from workers.turns.state import TurnEnvironment, TurnOutcome

ROLES = """\
roles:
  sales:
    grants:
      - database: erp
        deny: ["EMP_*"]
      - database: billing
  everyone:
    grants:
      - database: erp
        allow: ["ORD_*", "CUST_*", "CODE_*", "PRD_*"]
  nobody:
    grants: []
groups:
  - platform: slack
    group: S_SALES
    roles: [sales]
  - platform: slack
    group: S_NONE
    roles: [nobody]
default_role: everyone
"""


def model_settings(server: FakeModelServer, base: Settings, **extra: Any) -> Settings:
    values: dict[str, Any] = {"database_url": base.database_url.get_secret_value()}  # type: ignore[union-attr]
    if isinstance(server, FakeAnthropicServer):
        values |= {"model": "anthropic:fake-model", "anthropic_api_key": "test-key", "anthropic_base_url": server.url}
    else:
        values |= {"model": "openai:fake-model", "openai_base_url": server.url, "openai_api_key": "test-key"}
    return isolated_settings(base.home, **(values | extra))


@dataclass
class TurnWorld:
    installation: Installation
    encoders: Encoders
    erp_path: Path

    @property
    def settings(self) -> Settings:
        return self.installation.settings

    def environment(self, server: FakeModelServer, **extra: Any) -> TurnEnvironment:
        settings = model_settings(server, self.settings, **extra)
        provider = provider_from_settings(settings)
        assert provider is not None
        return TurnEnvironment(settings, self.installation.store, self.encoders, provider, owner="test-worker")

    def submit(
        self,
        question: str,
        *,
        user: str = "U_SALES",
        platform: str = "slack",
        channel: str = "C_GENERAL",
        thread: str | None = None,
        private: bool = False,
        pins: tuple[str, ...] = (),
        intent: str = "question",
    ) -> int:
        with self.installation.store.transaction() as session:
            conversation = turn_repo.conversation(
                session, platform=platform, channel_id=channel, thread_id=thread or question[:60], private=private
            )
            turn = turn_repo.create_turn(
                session,
                conversation.id,
                user_platform=platform,
                user_id=user,
                question=question,
                pins=pins,
                intent=intent,
            )
            return turn.id

    def run(self, env: TurnEnvironment, turn_id: int) -> TurnOutcome:
        return run_turn(env, turn_id)

    def turn(self, turn_id: int) -> dict[str, Any]:
        with self.installation.store.transaction() as session:
            row = session.get(Turn, turn_id)
            assert row is not None
            return {
                "status": row.status,
                "answer": row.answer,
                "tables_used": list(row.tables_used),
                "result": dict(row.result or {}),
                "attempts": row.attempts,
                "error": row.error,
            }

    def erp_scalar(self, sql: str) -> Any:
        with sqlite3.connect(self.erp_path) as conn:
            return conn.execute(sql).fetchone()[0]


@pytest.fixture(scope="session")
def turn_world(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TurnWorld]:
    home = tmp_path_factory.mktemp("turn-home")
    installation = new_installation(store_server, home)
    sample = sample_databases(tmp_path_factory.mktemp("turn-sample"))
    for name in ("erp", "billing"):
        installation.add(name, f"sqlite:///{sample[name]}")
    config = home / "tablescout.yaml"
    config.write_text(config.read_text() + ROLES)
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    embedder = default_embedder()
    for name in ("erp", "billing"):
        report = refresh_source(installation.settings, installation.store, name, AnalysisOptions(), embedder=embedder)
        assert report.analysis.error is None
    now = datetime.now(UTC)
    with installation.store.transaction() as session:
        sales = directory.upsert_user(session, platform="slack", user_id="U_SALES", synced_at=now)
        directory.upsert_user(session, platform="slack", user_id="U_GUEST", synced_at=now)
        nobody = directory.upsert_user(session, platform="slack", user_id="U_NONE", synced_at=now)
        group = directory.upsert_group(session, platform="slack", group_id="S_SALES", synced_at=now)
        directory.replace_members(session, group, [sales])
        none_group = directory.upsert_group(session, platform="slack", group_id="S_NONE", synced_at=now)
        directory.replace_members(session, none_group, [nobody])
    yield TurnWorld(installation, Encoders(embedder, BiEncoderReranker(embedder)), sample["erp"])
    installation.store.close()


@pytest.fixture(scope="session")
def mariadb_turn_world(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TurnWorld]:
    """The same sample ERP loaded into a scratch MariaDB database, registered as `erp`."""
    name = f"ts_turn_{uuid.uuid4().hex[:8]}"
    server = create_engine(MARIADB_SERVER)
    with server.begin() as conn:
        conn.execute(text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
    url = f"mysql+pymysql://root@127.0.0.1:3306/{name}"
    load_into(url, "erp")
    home = tmp_path_factory.mktemp("turn-home-mariadb")
    installation = new_installation(store_server, home)
    installation.add("erp", url, allow_privileged=True)  # root is a superuser
    config = home / "tablescout.yaml"
    config.write_text(config.read_text() + ROLES.replace("      - database: billing\n", ""))
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    embedder = default_embedder()
    report = refresh_source(installation.settings, installation.store, "erp", AnalysisOptions(), embedder=embedder)
    assert report.analysis.error is None
    with installation.store.transaction() as session:
        sales = directory.upsert_user(session, platform="slack", user_id="U_SALES", synced_at=datetime.now(UTC))
        group = directory.upsert_group(session, platform="slack", group_id="S_SALES", synced_at=datetime.now(UTC))
        directory.replace_members(session, group, [sales])
    sample = sample_databases(tmp_path_factory.mktemp("turn-sample-mariadb"))  # the same rows, for expected values
    yield TurnWorld(installation, Encoders(embedder, BiEncoderReranker(embedder)), sample["erp"])
    installation.store.close()
    with server.begin() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
    server.dispose()


@pytest.fixture
def forget_notes(turn_world: TurnWorld) -> Iterator[None]:
    """Notes a test saves would change what search ranks for other tests of the shared installation: remove them."""
    with turn_world.installation.store.transaction() as session:
        before = session.scalar(select(func.max(Note.id))) or 0
    yield
    with turn_world.installation.store.transaction() as session:
        session.execute(delete(Note).where(Note.id > before))
