"""Replies of a registered bot: a Bearer token from the configured Entra ID authority (over TLS, nothing asked
anywhere else) on every connector request, and an authority that is down for a while is a delivery failure that
passes, never a crash."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.teams.poster import TeamsDeliveryError, TeamsPoster
from tests.bot.teams.test_adapter import answer_payload, card_of, stored_reference
from tests.fakes.teams_connector import FakeTeamsConnector
from tests.fakes.teams_entra import FakeBotEntra
from tests.fakes.teams_fixtures import BOT_ACCESS_TOKEN, BOT_APP_ID, bot_entra, bot_settings


def registered_poster(home: Path, entra: FakeBotEntra, **values: object) -> TeamsPoster:
    return TeamsPoster(bot_settings(home, entra, **values), backoff_base_s=0.01)


def status_then_answer(teams: TeamsPoster, reference: dict[str, Any]) -> tuple[str, str]:
    async def flow() -> tuple[str, str]:
        status_id = await teams.post_status(reference, "Searching tables\u2026")
        await teams.update_status(reference, status_id, "Running SQL on erp\u2026")
        return status_id, await teams.post_answer(reference, status_id, answer_payload())

    return asyncio.run(flow())


@pytest.mark.parametrize(
    ("tenant", "metadata_url"),
    [
        ("tenant-1", None),
        ("tenant-1", "https://127.0.0.1:9/v1/.well-known/openidconfiguration"),
        ("botframework.com", None),
    ],
    ids=["single-tenant", "with-channel-keys-elsewhere", "multi-tenant"],
)
def test_replies_carry_a_token_from_the_configured_authority(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_teams_connector: FakeTeamsConnector,
    tenant: str,
    metadata_url: str | None,
) -> None:
    entra = bot_entra(tmp_path / "tls", tenant=tenant)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(entra.ca_file))
    reference = stored_reference(tmp_path, fake_teams_connector)
    with entra:
        teams = registered_poster(tmp_path, entra, teams_openid_metadata_url=metadata_url)
        status_id, answer_id = status_then_answer(teams, reference)
    assert answer_id == status_id
    assert [r.status for r in fake_teams_connector.requests] == [201, 200, 200]
    assert {r.headers.get("Authorization") for r in fake_teams_connector.requests} == {f"Bearer {BOT_ACCESS_TOKEN}"}
    assert card_of(fake_teams_connector.messages[status_id])["type"] == "AdaptiveCard"
    # Only the configured authority was asked (the loopback test network has no other), its port kept, and the
    # token was fetched once for the three messages.
    assert {r.path.split("/")[1] for r in entra.requests} == {tenant}
    [token_request] = entra.token_requests()
    assert token_request.params["grant_type"] == "client_credentials"
    assert token_request.params["client_id"] == BOT_APP_ID
    assert token_request.params["scope"] == "https://api.botframework.com/.default"


def test_a_down_authority_is_a_delivery_error_until_it_is_back(
    tmp_path: Path, fake_bot_entra: FakeBotEntra, fake_teams_connector: FakeTeamsConnector
) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    teams = registered_poster(tmp_path, fake_bot_entra)
    fake_bot_entra.go_down()
    with pytest.raises(TeamsDeliveryError, match="no Bot Framework token") as caught:
        asyncio.run(teams.post_status(reference, "Searching tables\u2026"))
    assert not caught.value.maybe_delivered  # nothing reached the connector, so a send may be repeated
    assert not caught.value.permanent
    assert fake_teams_connector.requests == []
    fake_bot_entra.come_back()
    status_id, _ = status_then_answer(teams, reference)
    assert fake_teams_connector.created == [status_id]
    assert {r.headers.get("Authorization") for r in fake_teams_connector.requests} == {f"Bearer {BOT_ACCESS_TOKEN}"}


def test_a_refused_app_password_is_a_delivery_error_with_the_reason(
    tmp_path: Path, fake_bot_entra: FakeBotEntra, fake_teams_connector: FakeTeamsConnector
) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    teams = registered_poster(tmp_path, fake_bot_entra, teams_app_password="wrong-password")
    with pytest.raises(TeamsDeliveryError, match="invalid_client") as caught:
        asyncio.run(teams.post_answer(reference, None, answer_payload()))
    assert not caught.value.maybe_delivered
    assert len(fake_bot_entra.token_requests()) == 1  # a refusal is not asked again within one delivery
    assert fake_teams_connector.requests == []


def test_a_token_the_connector_refuses_is_fetched_again(
    tmp_path: Path, fake_bot_entra: FakeBotEntra, fake_teams_connector: FakeTeamsConnector
) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    teams = registered_poster(tmp_path, fake_bot_entra)
    fake_teams_connector.fail_next(401)
    with pytest.raises(TeamsDeliveryError) as caught:
        asyncio.run(teams.post_answer(reference, None, answer_payload()))
    assert caught.value.status_code == 401
    assert not caught.value.maybe_delivered  # refused: the connector created nothing
    assert fake_teams_connector.created == []
    answer_id = asyncio.run(teams.post_answer(reference, None, answer_payload()))
    assert fake_teams_connector.created == [answer_id]
    assert len(fake_bot_entra.token_requests()) == 2
