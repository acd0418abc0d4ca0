"""Issue 30, item 9, for the directory sync: a Graph token that Entra ID cannot issue (an HTTP 500, a proxy's HTML
page) is asked for again a bounded number of times and then is a `DirectorySyncError` that says why, never msal's
own exception; nothing of the Teams directory is written and Graph is never called without a token."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from bot.directory.errors import DirectorySyncError
from bot.directory.graph_sync import TOKEN_ATTEMPTS, fetch_entra_directory
from bot.directory.snapshot import apply_snapshot
from core.store.repositories import directory
from tests.bot.directory.conftest import TENANT, directory_settings
from tests.bot.directory.test_graph_sync import NOW, seed
from tests.fakes.directory_servers import Answer, FakeEntraServer, FakeGraphServer

SERVER_ERROR = Answer(500, {"error": "server_error", "error_description": "AADSTS50000: There was an error."})


def test_a_token_endpoint_answering_500_once_is_asked_again(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_graph)
    fake_entra.fail_tokens(SERVER_ERROR, times=1)
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph)

    report = apply_snapshot(session, fetch_entra_directory(settings), now=NOW)

    assert report.groups == 4
    assert len(fake_entra.token_requests()) == 2


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (SERVER_ERROR, "failed the token request (HTTP Error: 500)"),
        (
            Answer(200, None, raw=b"<html><body>Proxy error</body></html>", content_type="text/html"),
            "gave an unreadable token answer (not JSON)",
        ),
    ],
    ids=["http-500", "html-page"],
)
def test_a_token_endpoint_that_keeps_failing_is_a_clear_error(
    session: Session,
    fake_entra: FakeEntraServer,
    fake_graph: FakeGraphServer,
    tmp_path: Path,
    config_path: Path,
    answer: Answer,
    said: str,
) -> None:
    seed(fake_graph)
    fake_entra.fail_tokens(answer)
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph)

    with pytest.raises(DirectorySyncError) as raised:
        apply_snapshot(session, fetch_entra_directory(settings), now=NOW)

    assert str(raised.value) == (
        f"no Microsoft Graph token after {TOKEN_ATTEMPTS} attempts: Entra ID at {fake_entra.url}/{TENANT} "
        f"(TABLESCOUT_ENTRA_LOGIN_URL, TABLESCOUT_TEAMS_TENANT_ID) {said}"
    )
    assert raised.value.platform == "teams"
    assert len(fake_entra.token_requests()) == TOKEN_ATTEMPTS
    assert fake_graph.requests == [], "Graph is never called without a token"
    assert directory.user(session, "teams", "u-1") is None
