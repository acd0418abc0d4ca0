"""Pytest fixtures for the Teams fakes: the Bot Framework connector and the bot's Entra ID authority; a test folder's
conftest.py (or a test module) imports them to use them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config.settings import Settings
from tests.fakes.teams_connector import FakeTeamsConnector
from tests.fakes.teams_entra import FakeBotEntra
from tests.support import isolated_settings

BOT_APP_ID = "00000000-0000-0000-0000-00000000a11d"
BOT_APP_PASSWORD = "bot-app-secret"
BOT_TENANT = "tenant-1"
BOT_ACCESS_TOKEN = "bot-framework-token-from-fake-entra"


@pytest.fixture
def fake_teams_connector() -> Iterator[FakeTeamsConnector]:
    """A started fake connector; activities whose serviceUrl is `fake_teams_connector.url` reach it."""
    with FakeTeamsConnector() as connector:
        yield connector


def bot_entra(certificates: Path, tenant: str = BOT_TENANT) -> FakeBotEntra:
    """The bot app's authority (not started), issuing BOT_ACCESS_TOKEN to BOT_APP_ID with BOT_APP_PASSWORD."""
    return FakeBotEntra(
        certificates,
        tenant=tenant,
        client_id=BOT_APP_ID,
        client_secret=BOT_APP_PASSWORD,
        access_token=BOT_ACCESS_TOKEN,
    )


@pytest.fixture
def fake_bot_entra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBotEntra]:
    """A started authority for a single-tenant bot (tenant BOT_TENANT), its certificate authority trusted."""
    entra = bot_entra(tmp_path / "entra-tls")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(entra.ca_file))  # what msal's HTTP library trusts
    with entra:
        yield entra


def bot_settings(home: Path, entra: FakeBotEntra, **values: object) -> Settings:
    """Settings of a bot registered as BOT_APP_ID whose tokens come from `entra`."""
    base: dict[str, object] = {
        "teams_app_id": BOT_APP_ID,
        "teams_app_password": BOT_APP_PASSWORD,
        "entra_login_url": entra.url,
    }
    if entra.tenant != "botframework.com":  # a multi-tenant bot has no tenant of its own
        base["teams_tenant_id"] = entra.tenant
    return isolated_settings(home, **(base | values))
