"""Slack profile fields (standard and custom, labelled by team.profile.get) synced as user attributes through the real
slack_sdk against the fake Web API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.orm import Session

from bot.directory.slack_sync import fetch_slack_directory
from bot.directory.snapshot import apply_snapshot
from core.access.permissions import resolve_principal
from core.store.repositories import directory
from tests.bot.directory.conftest import directory_settings
from tests.fakes.directory_servers import FakeSlackServer, SlackGroup, SlackProfile, SlackProfileField

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def seed(slack: FakeSlackServer) -> None:
    slack.groups = {
        "S0HR": SlackGroup("hr-team", "HR", ["U_ANNA", "U_BEN"]),
        "S0SALES": SlackGroup("sales", "Sales", ["U_BEN", "U_CARL", "U_GONE"]),
    }
    slack.profile_fields = [
        SlackProfileField("Xf01", "Department"),
        SlackProfileField("Xf02", "City"),
        SlackProfileField("Xf03", "Employee ID"),
        SlackProfileField("Xf04", "Departments"),
        SlackProfileField("Xf05", "Sales region", type="options_list"),
        SlackProfileField("Xf06", "Country"),
    ]
    slack.profiles = {
        "U_ANNA": SlackProfile(
            standard={"title": "Sales rep", "real_name": "Anna Kim", "email": "anna@example.com"},
            custom={"Xf01": "Sales", "Xf02": " Busan ", "Xf03": "E-1001", "Xf05": "KR-26", "Xf06": ""},
        ),
        "U_BEN": SlackProfile(
            standard={"display_name": "ben"}, custom={"Xf01": "HR", "Xf04": "HR, Payroll;Benefits", "Xf99": "x"}
        ),
        "U_CARL": SlackProfile(),  # nothing filled in: Slack answers `fields: []`
        # U_GONE has no profile: users.profile.get answers user_not_found (left the workspace since)
    }


def test_profile_fields_become_normalised_attributes(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)

    report = apply_snapshot(session, fetch_slack_directory(settings), now=NOW)

    assert (report.users, report.users_with_attributes, report.attributes_skipped) == (4, 2, None)
    anna = directory.user(session, "slack", "U_ANNA")
    assert anna is not None
    assert anna.attributes == {
        "title": "Sales rep",
        "email": "anna@example.com",
        "department": "Sales",
        "departments": ["Sales"],
        "city": "Busan",
        "employee_id": "E-1001",
        "sales_region": "KR-26",
    }, "an empty field (Country) stays missing; values are trimmed"
    assert (anna.display_name, anna.email) == ("Anna Kim", "anna@example.com")
    ben = directory.user(session, "slack", "U_BEN")
    assert ben is not None
    assert ben.attributes == {"department": "HR", "departments": ["HR", "Payroll", "Benefits"]}, (
        "a field without a label (Xf99) is left out"
    )
    for nobody in ("U_CARL", "U_GONE"):
        user = directory.user(session, "slack", nobody)
        assert user is not None
        assert user.attributes == {}
    assert len(fake_slack.calls_to("team.profile.get")) == 1, "labels are read once per sync"
    asked = sorted(r.params["user"] for r in fake_slack.calls_to("users.profile.get"))
    assert asked == ["U_ANNA", "U_BEN", "U_CARL", "U_GONE"], "each member once, though U_BEN is in two groups"


def test_the_principal_of_a_turn_carries_the_synced_attributes(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)
    apply_snapshot(session, fetch_slack_directory(settings), now=NOW)

    anna = resolve_principal(session, settings.file, "slack", "U_ANNA")
    assert anna.attribute("city") == "Busan"
    assert anna.attribute("EMPLOYEE_ID") == "E-1001"
    assert anna.attribute("departments") == ("Sales",)
    assert anna.attribute("country") is None, "an empty profile field is a missing attribute"
    ben = resolve_principal(session, settings.file, "slack", "U_BEN")
    assert ben.attribute("departments") == ("HR", "Payroll", "Benefits")
    assert ben.attribute("city") is None
    stranger = resolve_principal(session, settings.file, "slack", "U_NOT_SYNCED")
    assert not stranger.in_directory
    assert dict(stranger.attributes) == {}


def test_a_cleared_field_is_gone_after_the_next_sync(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)
    apply_snapshot(session, fetch_slack_directory(settings), now=NOW)

    del fake_slack.profiles["U_ANNA"].custom["Xf02"]  # Anna moved; her city is not filled in yet
    fake_slack.profiles["U_ANNA"].custom["Xf01"] = "Marketing"
    apply_snapshot(session, fetch_slack_directory(settings), now=NOW + timedelta(hours=1))

    anna = directory.user(session, "slack", "U_ANNA")
    assert anna is not None
    assert "city" not in anna.attributes
    assert (anna.attributes["department"], anna.attributes["departments"]) == ("Marketing", ["Marketing"])


def test_without_the_profile_scope_groups_sync_and_attributes_are_dropped(
    session: Session, fake_slack: FakeSlackServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_slack)
    settings = directory_settings(tmp_path, config_path, slack=fake_slack)
    apply_snapshot(session, fetch_slack_directory(settings), now=NOW)

    fake_slack.missing_scopes["team.profile.get"] = "users.profile:read"
    report = apply_snapshot(session, fetch_slack_directory(settings), now=NOW + timedelta(hours=1))

    assert (report.groups, report.memberships, report.users_with_attributes) == (2, 5, 0)
    assert report.attributes_skipped is not None
    assert "users.profile:read" in report.attributes_skipped
    anna = directory.user(session, "slack", "U_ANNA")
    assert anna is not None
    assert anna.attributes == {}, "stale attributes are not kept: a filter needing one now matches nothing"
    assert [g.group_id for g in directory.groups_of(session, "slack", "U_ANNA")] == ["S0HR"]
    assert len(fake_slack.calls_to("users.profile.get")) == 4, "the second sync read no profile"
