"""`sync_directory` over every platform with a store of its own (each platform committed in its own transaction),
the `tablescout directory sync` command and the scheduled task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bot.directory.errors import DirectorySyncError
from bot.directory.service import sync_directory
from core.access.permissions import resolve_principal
from core.errors import ConfigError
from core.store.database import Store
from core.store.repositories import directory
from tablescout.cli import directory_cmd
from tests.bot.directory.conftest import SLACK_TOKEN, directory_settings
from tests.fakes.directory_servers import (
    FakeEntraServer,
    FakeGraphServer,
    FakeSlackServer,
    GraphGroup,
    GraphUser,
    SlackGroup,
)
from tests.support import role_names


def seed(slack: FakeSlackServer, graph: FakeGraphServer | None = None) -> None:
    slack.groups = {
        "S0HR": SlackGroup("hr-team", "HR", ["U_ANNA", "U_BEN"]),
        "S0SALES": SlackGroup("sales", "Sales", ["U_CARL"]),
    }
    if graph is not None:
        graph.users = {"aad-1": GraphUser("Ida", "ida@example.com"), "aad-2": GraphUser("Jon")}
        graph.groups = {"g-hr": GraphGroup("HR", "hr", ["aad-1"]), "g-sales": GraphGroup("Sales", None, ["aad-2"])}


def test_every_configured_platform_is_synced_and_committed(
    scratch_store: Store,
    fake_slack: FakeSlackServer,
    fake_entra: FakeEntraServer,
    fake_graph: FakeGraphServer,
    tmp_path: Path,
    config_path: Path,
) -> None:
    seed(fake_slack, fake_graph)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack, entra=fake_entra, graph=fake_graph)

    reports = sync_directory(settings, scratch_store)

    assert [(r.platform, r.groups, r.users, r.memberships, r.skipped) for r in reports] == [
        ("slack", 2, 3, 3, None),
        ("teams", 2, 2, 2, None),
    ]
    with scratch_store.transaction() as session:
        assert role_names(resolve_principal(session, settings.file, "slack", "U_ANNA")) == ("hr",)
        assert resolve_principal(session, settings.file, "teams", "aad-1").may_see("erp", "EMP_MST")
        assert not resolve_principal(session, settings.file, "teams", "aad-2").may_see("erp", "EMP_MST")


def test_a_platform_without_credentials_is_skipped_with_the_reason(
    scratch_store: Store, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack, teams_app_id="app-without-password")

    reports = sync_directory(settings, scratch_store)

    assert [r.platform for r in reports] == ["slack", "teams"]
    assert reports[0].skipped is None
    assert reports[1].skipped == "TABLESCOUT_TEAMS_APP_PASSWORD, TABLESCOUT_TEAMS_TENANT_ID not set"
    nothing = sync_directory(directory_settings(tmp_path, config_path), scratch_store, ["slack"])
    assert nothing[0].skipped == "SLACK_BOT_TOKEN not set"


def test_a_token_revoked_mid_sync_writes_nothing_and_keeps_the_last_directory(
    scratch_store: Store, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)
    sync_directory(settings, scratch_store, ["slack"])

    fake_slack.groups["S0HR"].users.remove("U_ANNA")  # would take HR away from Anna ...
    fake_slack.revoke_token_after(2)  # ... but the token stops working half-way through the read
    with pytest.raises(DirectorySyncError) as raised:
        sync_directory(settings, scratch_store, ["slack"])

    assert "SLACK_BOT_TOKEN" in str(raised.value)
    assert "token_revoked" in str(raised.value)
    assert SLACK_TOKEN not in str(raised.value)
    with scratch_store.transaction() as session:
        assert [g.group_id for g in directory.groups_of(session, "slack", "U_ANNA")] == ["S0HR"]


def test_one_failing_platform_does_not_stop_the_other(
    scratch_store: Store,
    fake_slack: FakeSlackServer,
    fake_entra: FakeEntraServer,
    fake_graph: FakeGraphServer,
    tmp_path: Path,
    config_path: Path,
) -> None:
    seed(fake_slack, fake_graph)
    settings = directory_settings(
        tmp_path, config_path, slack=fake_slack, entra=fake_entra, graph=fake_graph, slack_bot_token="xoxb-bad"
    )

    with pytest.raises(DirectorySyncError, match=r"^Slack directory sync failed: Slack refused SLACK_BOT") as raised:
        sync_directory(settings, scratch_store)

    assert raised.value.platform == "slack"
    assert [(r.platform, r.groups) for r in raised.value.reports] == [("teams", 2)]
    with scratch_store.transaction() as session:
        assert directory.user(session, "teams", "aad-1") is not None
        assert directory.user(session, "slack", "U_ANNA") is None


def test_an_unknown_platform_is_refused(scratch_store: Store, tmp_path: Path, config_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown platform 'discord'"):
        sync_directory(directory_settings(tmp_path, config_path), scratch_store, ["slack", "discord"])


def tablescout_cli() -> typer.Typer:
    """The command as `tablescout` registers it (`app.add_typer(directory_cmd.app, name="directory")`)."""
    cli = typer.Typer()
    cli.add_typer(directory_cmd.app, name="directory")
    return cli


@pytest.fixture
def environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config_path: Path, scratch_url: str, fake_slack: FakeSlackServer
) -> FakeSlackServer:
    """The environment of an installation whose Slack is the fake and whose Teams is not configured."""
    for name in ("TABLESCOUT_TEAMS_APP_ID", "TABLESCOUT_TEAMS_APP_PASSWORD", "TABLESCOUT_TEAMS_TENANT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TABLESCOUT_HOME", str(tmp_path))
    monkeypatch.setenv("TABLESCOUT_CONFIG", str(config_path))
    monkeypatch.setenv("TABLESCOUT_DATABASE_URL", scratch_url)
    monkeypatch.setenv("TABLESCOUT_SLACK_API_URL", fake_slack.url)
    monkeypatch.setenv("SLACK_BOT_TOKEN", SLACK_TOKEN)
    seed(fake_slack)
    return fake_slack


def test_the_command_prints_counts_per_platform(environment: FakeSlackServer) -> None:
    result = CliRunner().invoke(tablescout_cli(), ["directory", "sync", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows == [
        {
            "platform": "slack",
            "synced": True,
            "groups": 2,
            "users": 3,
            "memberships": 3,
            "removed_groups": 0,
            "removed_users": 0,
            "skipped": None,
            "users_with_attributes": 0,
            "attributes_skipped": None,
            "error": None,
        },
        {
            "platform": "teams",
            "synced": False,
            "groups": 0,
            "users": 0,
            "memberships": 0,
            "removed_groups": 0,
            "removed_users": 0,
            "skipped": "TABLESCOUT_TEAMS_APP_ID, TABLESCOUT_TEAMS_APP_PASSWORD, TABLESCOUT_TEAMS_TENANT_ID not set",
            "users_with_attributes": 0,
            "attributes_skipped": None,
            "error": None,
        },
    ]

    table = CliRunner().invoke(tablescout_cli(), ["directory", "sync", "--platform", "slack"])
    assert table.exit_code == 0, table.output
    assert "slack" in table.stdout
    assert "synced" in table.stdout
    assert "teams" not in table.stdout


def test_the_command_reports_a_failure_and_exits_non_zero(
    environment: FakeSlackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-not-valid")
    result = CliRunner().invoke(tablescout_cli(), ["directory", "sync", "--platform", "slack", "--json"])
    assert isinstance(result.exception, DirectorySyncError)
    assert json.loads(result.stdout)[0]["error"].startswith("Slack directory sync failed: Slack refused SLACK_BOT")
    assert "xoxb-not-valid" not in result.stdout


def test_the_scheduled_task_syncs_and_reports_instead_of_raising(
    environment: FakeSlackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.app import DIRECTORY_SYNC_TASK, app
    from workers.tasks.directory import run_directory_sync

    assert DIRECTORY_SYNC_TASK in app.tasks
    assert any(e["task"] == DIRECTORY_SYNC_TASK for e in app.conf.beat_schedule.values())
    assert run_directory_sync() == {
        "slack": "ok",
        "teams": "skipped: TABLESCOUT_TEAMS_APP_ID, TABLESCOUT_TEAMS_APP_PASSWORD, TABLESCOUT_TEAMS_TENANT_ID not set",
    }
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-not-valid")
    outcome = run_directory_sync(["slack"])
    assert outcome["slack"].startswith("failed: Slack directory sync failed: Slack refused SLACK_BOT_TOKEN")
