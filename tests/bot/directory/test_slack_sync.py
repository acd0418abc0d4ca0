"""Slack user groups synced through the real slack_sdk against a fake Web API, and the roles they give."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from bot.directory.errors import DirectorySyncError
from bot.directory.slack_sync import fetch_slack_directory
from bot.directory.snapshot import apply_snapshot
from core.access.permissions import resolve_principal
from core.store.repositories import directory
from tests.bot.directory.conftest import SLACK_TOKEN, directory_settings
from tests.fakes.directory_servers import FakeSlackServer, SlackGroup
from tests.support import role_names

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def seed(slack: FakeSlackServer) -> None:
    slack.groups = {
        "S0HR": SlackGroup("hr-team", "HR", ["U_ANNA", "U_BEN"]),
        "S0SALES": SlackGroup("sales", "Sales", ["U_BEN", "U_CARL"]),
        "S0OLD": SlackGroup("old-team", "Old team", ["U_DORA"], disabled=True),
    }


def test_sync_populates_groups_users_and_memberships(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)

    report = apply_snapshot(session, fetch_slack_directory(settings), now=NOW)

    assert (report.platform, report.groups, report.users, report.memberships) == ("slack", 2, 3, 4)
    groups = directory.groups_of(session, "slack", "U_BEN")
    assert [(g.group_id, g.handle, g.name, g.workspace_id) for g in groups] == [
        ("S0HR", "hr-team", "HR", "T0TABLESCOUT"),
        ("S0SALES", "sales", "Sales", "T0TABLESCOUT"),
    ]
    assert directory.user(session, "slack", "U_DORA") is None, "members of a disabled group are not synced"
    anna = directory.user(session, "slack", "U_ANNA")
    assert anna is not None
    assert anna.synced_at == NOW
    assert all(r.headers["authorization"] == f"Bearer {SLACK_TOKEN}" for r in fake_slack.requests)
    assert fake_slack.calls_to("usergroups.list")[0].params["include_disabled"] in ("0", "false")
    assert len(fake_slack.calls_to("usergroups.users.list")) == 2


def test_membership_change_moves_a_user_out_of_hr(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)
    apply_snapshot(session, fetch_slack_directory(settings), now=NOW)
    anna = resolve_principal(session, settings.file, "slack", "U_ANNA")
    assert role_names(anna) == ("hr",)
    assert anna.may_see("erp", "EMP_MST")

    fake_slack.groups["S0HR"].users.remove("U_ANNA")
    fake_slack.groups["S0SALES"].users.append("U_ANNA")
    apply_snapshot(session, fetch_slack_directory(settings), now=NOW + timedelta(hours=1))

    anna = resolve_principal(session, settings.file, "slack", "U_ANNA")
    assert role_names(anna) == ("sales",)
    assert not anna.may_see("erp", "EMP_MST")
    assert anna.may_see("erp", "ORD_MST")


def test_a_user_who_left_every_group_gets_the_default_role(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)
    apply_snapshot(session, fetch_slack_directory(settings), now=NOW)
    assert resolve_principal(session, settings.file, "slack", "U_ANNA").may_see("erp", "EMP_MST")

    fake_slack.groups["S0HR"].users.remove("U_ANNA")
    fake_slack.groups["S0SALES"].disabled = True  # a disabled group takes its roles with it
    report = apply_snapshot(session, fetch_slack_directory(settings), now=NOW + timedelta(hours=1))

    assert (report.groups, report.removed_groups, report.removed_users) == (1, 1, 2)  # S0SALES; U_ANNA, U_CARL
    anna = resolve_principal(session, settings.file, "slack", "U_ANNA")
    assert role_names(anna) == ("everyone",)
    assert not anna.in_directory
    assert not anna.may_see("erp", "EMP_MST")
    assert anna.may_see("erp", "ORD_MST")
    assert role_names(resolve_principal(session, settings.file, "slack", "U_BEN")) == ("hr",)
    assert directory.groups_of(session, "slack", "U_CARL") == []


def test_a_rate_limited_call_is_retried_after_retry_after(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    fake_slack.rate_limit_next("usergroups.users.list", retry_after=1)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)

    started = time.monotonic()
    report = apply_snapshot(session, fetch_slack_directory(settings), now=NOW)

    assert time.monotonic() - started >= 1.0, "the retry waited for Retry-After"
    assert report.memberships == 4
    calls = fake_slack.calls_to("usergroups.users.list")
    assert len(calls) == 3
    assert calls[0].params["usergroup"] == calls[1].params["usergroup"], "the rate-limited call was repeated"


def test_a_bad_token_is_a_clear_error_that_never_shows_the_token(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack, slack_bot_token="xoxb-wrong-secret")

    with pytest.raises(DirectorySyncError) as raised:
        apply_snapshot(session, fetch_slack_directory(settings), now=NOW)

    message = str(raised.value)
    assert "SLACK_BOT_TOKEN" in message
    assert "invalid_auth" in message
    assert "xoxb-wrong-secret" not in message
    assert raised.value.platform == "slack"
    assert directory.user(session, "slack", "U_ANNA") is None


def test_a_missing_scope_names_the_scope(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    fake_slack.missing_scope = "usergroups:read"
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)

    with pytest.raises(DirectorySyncError, match="lacks the scope usergroups:read"):
        apply_snapshot(session, fetch_slack_directory(settings), now=NOW)


def test_an_unreachable_api_names_the_address(session: Session, tmp_path: Path, config_path: Path) -> None:
    settings = directory_settings(
        tmp_path, config_path, slack_bot_token=SLACK_TOKEN, slack_api_url="http://127.0.0.1:9/api/"
    )
    with pytest.raises(DirectorySyncError, match=r"cannot reach the Slack Web API at http://127\.0\.0\.1:9/api/"):
        apply_snapshot(session, fetch_slack_directory(settings), now=NOW)
