"""Entra ID groups synced through the real msal (client credentials against a fake HTTPS authority) and Microsoft
Graph paging, and the roles they give Teams users."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from bot.directory.errors import DirectorySyncError
from bot.directory.graph_sync import fetch_entra_directory
from bot.directory.snapshot import apply_snapshot
from core.access.permissions import resolve_principal
from core.store.repositories import directory
from tests.bot.directory.conftest import APP_ID, APP_PASSWORD, GRAPH_TOKEN, TENANT, directory_settings
from tests.fakes.directory_servers import FakeEntraServer, FakeGraphServer, GraphGroup, GraphUser
from tests.support import role_names

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def seed(graph: FakeGraphServer) -> None:
    graph.users = {f"u-{n}": GraphUser(f"User {n}", f"user{n}@example.com") for n in range(1, 8)}
    graph.users["u-7"] = GraphUser("No Mail")
    graph.groups = {
        "g-hr": GraphGroup("Human Resources", "hr", ["u-1", "g-hr-leads"]),
        "g-hr-leads": GraphGroup("HR leads", "hr-leads", ["u-2"]),
        "g-sales": GraphGroup("Sales", "sales", ["u-3", "u-4", "u-5", "u-6", "u-7"]),
        "g-empty": GraphGroup("Empty", None, []),
    }


def test_sync_follows_pages_and_nested_groups(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_graph)
    fake_graph.page_size = 2
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph)

    report = apply_snapshot(session, fetch_entra_directory(settings), now=NOW)

    assert (report.platform, report.groups, report.users, report.memberships) == ("teams", 4, 7, 8)
    assert [g.group_id for g in directory.groups_of(session, "teams", "u-2")] == ["g-hr", "g-hr-leads"]
    assert [g.group_id for g in directory.groups_of(session, "teams", "u-7")] == ["g-sales"], "third page"
    sales = next(g for g in directory.groups_of(session, "teams", "u-3"))
    assert (sales.name, sales.handle, sales.workspace_id) == ("Sales", "sales", TENANT)
    user = directory.user(session, "teams", "u-5")
    assert user is not None
    assert (user.display_name, user.email, user.workspace_id) == ("User 5", "user5@example.com", TENANT)
    no_mail = directory.user(session, "teams", "u-7")
    assert no_mail is not None
    assert no_mail.email is None

    assert len(fake_graph.calls_to("/v1.0/groups")) >= 2 + 3, "two pages of groups, three of the sales members"
    member_pages = [r for r in fake_graph.calls_to("/groups/g-sales/") if r.path.endswith("microsoft.graph.user")]
    assert [r.params.get("$skiptoken") for r in member_pages] == [None, "2", "4"]
    assert all(r.params["$select"].startswith("id,displayName,mail,department,") for r in member_pages)
    assert all(r.headers["authorization"] == f"Bearer {GRAPH_TOKEN}" for r in fake_graph.requests)
    token_request = fake_entra.token_requests()
    assert len(token_request) == 1
    form = token_request[0].params
    assert (form["grant_type"], form["client_id"], form["client_secret"]) == (
        "client_credentials",
        APP_ID,
        APP_PASSWORD,
    )
    assert form["scope"].split() == [f"{fake_graph.origin}/.default"]


def test_membership_change_moves_a_teams_user_out_of_hr(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_graph)
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph)
    apply_snapshot(session, fetch_entra_directory(settings), now=NOW)
    lead = resolve_principal(session, settings.file, "teams", "u-2")
    assert role_names(lead) == ("hr",), "membership through a nested group counts"
    assert lead.may_see("erp", "EMP_MST")

    fake_graph.groups["g-hr-leads"].members.remove("u-2")
    fake_graph.groups["g-sales"].members.append("u-2")
    fake_graph.groups["g-hr"].members.remove("u-1")
    apply_snapshot(session, fetch_entra_directory(settings), now=NOW + timedelta(hours=1))

    lead = resolve_principal(session, settings.file, "teams", "u-2")
    assert role_names(lead) == ("sales",)
    assert not lead.may_see("erp", "EMP_MST")
    gone = resolve_principal(session, settings.file, "teams", "u-1")
    assert role_names(gone) == ("everyone",)
    assert not gone.in_directory
    assert not gone.may_see("erp", "EMP_MST")


def test_throttled_requests_are_retried_after_retry_after(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_graph)
    fake_graph.fail_next(429, retry_after="1")
    fake_graph.fail_next(503, retry_after="0")
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph)

    started = time.monotonic()
    report = apply_snapshot(session, fetch_entra_directory(settings), now=NOW)

    assert time.monotonic() - started >= 1.0
    assert report.groups == 4
    first_three = fake_graph.requests[:3]
    assert [r.path for r in first_three] == ["/v1.0/groups"] * 3


def test_a_wrong_app_password_is_a_clear_error(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_graph)
    settings = directory_settings(
        tmp_path, config_path, entra=fake_entra, graph=fake_graph, teams_app_password="not-the-secret"
    )
    with pytest.raises(DirectorySyncError) as raised:
        apply_snapshot(session, fetch_entra_directory(settings), now=NOW)
    message = str(raised.value)
    assert "TABLESCOUT_TEAMS_APP_PASSWORD" in message
    assert "invalid_client" in message
    assert "not-the-secret" not in message
    assert fake_graph.requests == [], "Graph is never called without a token"


def test_an_unknown_app_names_the_app_id(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph, teams_app_id="other")
    with pytest.raises(DirectorySyncError, match="does not know the app TABLESCOUT_TEAMS_APP_ID"):
        apply_snapshot(session, fetch_entra_directory(settings), now=NOW)


def test_an_unknown_tenant_names_the_authority(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph, teams_tenant_id="nope")
    with pytest.raises(DirectorySyncError, match=f"cannot use the Entra ID authority {fake_entra.url}/nope"):
        apply_snapshot(session, fetch_entra_directory(settings), now=NOW)


def test_missing_graph_permissions_are_named(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_graph)
    fake_graph.forbidden = True
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph)
    with pytest.raises(DirectorySyncError, match=r"GroupMember\.Read\.All and User\.Read\.All"):
        apply_snapshot(session, fetch_entra_directory(settings), now=NOW)
