"""Fixtures for the directory-sync tests: the fake Slack, Entra ID and Graph servers, a configuration with roles
mapped to their groups, and settings pointing at all of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config.settings import Settings
from core.store import migrate
from core.store.database import Store, open_store
from core.store.embedded import EmbeddedServer
from tests.conftest import create_scratch_database
from tests.fakes.directory_servers import FakeEntraServer, FakeGraphServer, FakeSlackServer
from tests.support import isolated_settings

SLACK_TOKEN = "xoxb-directory-test-token"
TENANT = "4f1e0c5a-tenant"
APP_ID = "7d1a-teams-app"
APP_PASSWORD = "teams-app-secret-value"
GRAPH_TOKEN = "graph-access-token"

CONFIG = """\
roles:
  hr:
    grants:
      - database: erp
  sales:
    grants:
      - database: erp
        allow: ["ORD_*", "CUST_*"]
  everyone:
    grants:
      - database: erp
        deny: ["EMP_*"]
groups:
  - platform: slack
    group: "@hr-team"
    roles: [hr]
  - platform: slack
    group: S0SALES
    roles: [sales]
  - platform: teams
    group: g-hr
    roles: [hr]
  - platform: teams
    group: g-sales
    roles: [sales]
default_role: everyone
"""


@pytest.fixture
def fake_slack() -> Iterator[FakeSlackServer]:
    with FakeSlackServer(SLACK_TOKEN) as server:
        yield server


@pytest.fixture
def fake_entra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEntraServer]:
    server = FakeEntraServer(
        tmp_path / "tls", tenant=TENANT, client_id=APP_ID, client_secret=APP_PASSWORD, access_token=GRAPH_TOKEN
    )
    # msal's HTTP library trusts the fake authority's certificate authority through the standard variable.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(server.ca_file))
    with server:
        yield server


@pytest.fixture
def fake_graph() -> Iterator[FakeGraphServer]:
    with FakeGraphServer(access_token=GRAPH_TOKEN) as server:
        yield server


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    path = tmp_path / "tablescout.yaml"
    path.write_text(CONFIG)
    return path


@pytest.fixture
def scratch_url(store_server: EmbeddedServer) -> str:
    """A freshly migrated store database of this test's own, for code that commits."""
    url = create_scratch_database(store_server.url, "ts_dir").render_as_string(hide_password=False)
    store = open_store(isolated_settings(Path("/nonexistent"), database_url=url))
    try:
        migrate.upgrade(store.engine)
    finally:
        store.close()
    return url


@pytest.fixture
def scratch_store(scratch_url: str) -> Iterator[Store]:
    store = open_store(isolated_settings(Path("/nonexistent"), database_url=scratch_url))
    yield store
    store.close()


def directory_settings(
    home: Path,
    config: Path,
    *,
    slack: FakeSlackServer | None = None,
    entra: FakeEntraServer | None = None,
    graph: FakeGraphServer | None = None,
    database_url: str | None = None,
    **overrides: object,
) -> Settings:
    """Settings with credentials for the fakes given (and none for the platforms left out)."""
    values: dict[str, object] = {"config": config}
    if database_url is not None:
        values["database_url"] = database_url
    if slack is not None:
        values.update(slack_bot_token=SLACK_TOKEN, slack_api_url=slack.url)
    if entra is not None:
        values.update(
            teams_app_id=APP_ID, teams_app_password=APP_PASSWORD, teams_tenant_id=TENANT, entra_login_url=entra.url
        )
    if graph is not None:
        values["graph_api_url"] = graph.url
    values.update(overrides)
    return isolated_settings(home, **values)
