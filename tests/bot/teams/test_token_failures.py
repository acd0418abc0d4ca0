"""Issue 30, item 9: a Bot Framework token that Entra ID cannot issue (an HTTP 500, a proxy's HTML page, a token
answer of the wrong shape, an answer slower than the client waits) is a delivery failure with the true reason,
tried again within the send, never msal's own exception; once the authority answers again the reply goes out,
nothing of the failure cached."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.entra import EntraApp, EntraTokenError
from bot.teams.credentials import bot_authority, scope_of
from bot.teams.poster import MAX_TRIES, TeamsDeliveryError
from tests.bot.teams.test_adapter import stored_reference
from tests.bot.teams.test_authenticated_replies import registered_poster, status_then_answer
from tests.fakes.directory_servers import Answer
from tests.fakes.teams_connector import FakeTeamsConnector
from tests.fakes.teams_entra import FakeBotEntra
from tests.fakes.teams_fixtures import BOT_ACCESS_TOKEN, BOT_APP_ID, BOT_APP_PASSWORD, bot_settings

BOT_FRAMEWORK = "https://api.botframework.com"

#: What the token endpoint answers instead of a token, and the words the delivery error then says.
TOKEN_FAILURES = {
    "http-500": (
        Answer(500, {"error": "server_error", "error_description": "AADSTS50000: There was an error issuing a token."}),
        "failed the token request (HTTP Error: 500)",
    ),
    "http-503-retry-after": (
        Answer(503, {"error": "temporarily_unavailable"}, {"Retry-After": "30"}),
        "failed the token request (HTTP Error: 503)",
    ),
    "html-page": (
        Answer(200, None, raw=b"<html><body>Bad gateway</body></html>", content_type="text/html"),
        "gave an unreadable token answer (not JSON)",
    ),
    "json-list": (
        Answer(200, ["access_token", "x"]),
        "gave an unreadable token answer (JSON, but not shaped like one)",
    ),
    "no-access-token": (
        Answer(200, {"token_type": "Bearer", "expires_in": 3599}),
        "gave a token answer without an access token",
    ),
    "access-token-not-text": (
        Answer(200, {"token_type": "Bearer", "expires_in": 3599, "access_token": 42}),
        "gave a token answer without an access token",
    ),
    "expiry-not-a-number": (
        Answer(200, {"token_type": "Bearer", "expires_in": "soon", "access_token": "t"}),
        "gave an unreadable token answer (JSON, but not shaped like one)",
    ),
}


@pytest.mark.parametrize(("answer", "said"), TOKEN_FAILURES.values(), ids=TOKEN_FAILURES.keys())
def test_a_failing_token_endpoint_is_a_retried_delivery_error_until_it_answers_again(
    tmp_path: Path, fake_bot_entra: FakeBotEntra, fake_teams_connector: FakeTeamsConnector, answer: Answer, said: str
) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    teams = registered_poster(tmp_path, fake_bot_entra)
    fake_bot_entra.fail_tokens(answer)
    with pytest.raises(TeamsDeliveryError) as caught:
        asyncio.run(teams.post_status(reference, "Searching tables\u2026"))
    assert str(caught.value).startswith("no Bot Framework token for the send: Entra ID at ")
    assert said in str(caught.value)
    assert not caught.value.permanent  # retried later with the delivery backoff
    assert not caught.value.maybe_delivered  # nothing reached the connector, so the send may be repeated
    assert fake_teams_connector.requests == []
    assert len(fake_bot_entra.token_requests()) == MAX_TRIES  # asked again within the send, not replayed by msal

    fake_bot_entra.fail_tokens(None)
    status_id, _ = status_then_answer(teams, reference)
    assert fake_teams_connector.created == [status_id]
    assert {r.headers.get("Authorization") for r in fake_teams_connector.requests} == {f"Bearer {BOT_ACCESS_TOKEN}"}


def test_a_token_endpoint_slower_than_the_timeout_is_a_transient_failure(
    tmp_path: Path, fake_bot_entra: FakeBotEntra
) -> None:
    authority = bot_authority(bot_settings(tmp_path, fake_bot_entra))
    app = EntraApp(BOT_APP_ID, BOT_APP_PASSWORD, authority, timeout_s=0.3)
    fake_bot_entra.fail_tokens(Answer(200, {"access_token": "late", "expires_in": 3599}, delay_s=1.5), times=1)
    with pytest.raises(EntraTokenError) as caught:
        app.token(scope_of(BOT_FRAMEWORK))
    assert caught.value.transient
    assert str(caught.value) == f"Entra ID at {authority} did not answer the token request within 0.3 s"
    assert app.token(scope_of(BOT_FRAMEWORK)) == BOT_ACCESS_TOKEN


def test_an_openid_configuration_answering_500_is_a_transient_failure(
    tmp_path: Path, fake_bot_entra: FakeBotEntra
) -> None:
    """The same for the tenant's OpenID configuration, read when the msal application is made."""
    authority = bot_authority(bot_settings(tmp_path, fake_bot_entra))
    app = EntraApp(BOT_APP_ID, BOT_APP_PASSWORD, authority, timeout_s=5)
    fake_bot_entra.fail_discovery(Answer(500, {"error": "server_error"}), times=1)
    with pytest.raises(EntraTokenError) as caught:
        app.token(scope_of(BOT_FRAMEWORK))
    assert caught.value.transient
    assert str(caught.value) == f"Entra ID at {authority} failed the OpenID configuration request (HTTP Error: 500)"
    assert app.token(scope_of(BOT_FRAMEWORK)) == BOT_ACCESS_TOKEN


def test_an_unknown_tenant_is_not_transient(tmp_path: Path, fake_bot_entra: FakeBotEntra) -> None:
    authority = bot_authority(bot_settings(tmp_path, fake_bot_entra, teams_tenant_id="no-such-tenant"))
    with pytest.raises(EntraTokenError, match="cannot use the Entra ID authority") as caught:
        EntraApp(BOT_APP_ID, BOT_APP_PASSWORD, authority, timeout_s=5).token(scope_of(BOT_FRAMEWORK))
    assert not caught.value.transient
    assert caught.value.refusal is None
