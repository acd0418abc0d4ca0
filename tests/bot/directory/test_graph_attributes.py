"""Entra ID user properties and on-premises extension attributes, read with each group's members through Microsoft
Graph (the fake) and synced as user attributes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.orm import Session

from bot.directory.graph_sync import fetch_entra_directory
from bot.directory.snapshot import apply_snapshot
from core.access.permissions import resolve_principal
from core.store.repositories import directory
from tests.bot.directory.conftest import directory_settings
from tests.fakes.directory_servers import FakeEntraServer, FakeGraphServer, GraphGroup, GraphUser

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def seed(graph: FakeGraphServer) -> None:
    graph.users = {
        "u-busan": GraphUser(
            "Busan Rep",
            "rep@example.com",
            {
                "department": "Sales",
                "city": "Busan",
                "country": "South Korea",
                "employeeId": "E-2002",
                "officeLocation": "Busan branch",
                "jobTitle": "Sales rep",
                "usageLocation": "KR",
                "extensionAttribute3": "KR-26",
                "extensionAttribute15": "  ",
            },
        ),
        "u-bare": GraphUser("No Profile"),
    }
    graph.groups = {
        "g-sales": GraphGroup("Sales", "sales", ["g-busan"]),
        "g-busan": GraphGroup("Busan", "busan", ["u-busan", "u-bare"]),
    }


def test_user_properties_become_normalised_attributes(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_graph)
    fake_graph.page_size = 1
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph)

    report = apply_snapshot(session, fetch_entra_directory(settings), now=NOW)

    assert (report.users, report.users_with_attributes) == (2, 1)
    rep = directory.user(session, "teams", "u-busan")
    assert rep is not None
    assert rep.attributes == {
        "department": "Sales",
        "departments": ["Sales"],
        "city": "Busan",
        "country": "South Korea",
        "employee_id": "E-2002",
        "office_location": "Busan branch",
        "title": "Sales rep",
        "usage_location": "KR",
        "email": "rep@example.com",
        "extension_attribute_3": "KR-26",
    }, "null properties and a blank extension attribute stay missing"
    bare = directory.user(session, "teams", "u-bare")
    assert bare is not None
    assert bare.attributes == {}
    selects = {r.params["$select"] for r in fake_graph.requests if r.path.endswith("microsoft.graph.user")}
    assert len(selects) == 1
    assert {"department", "city", "country", "employeeId", "onPremisesExtensionAttributes"} <= set(
        selects.pop().split(",")
    )


def test_a_property_removed_in_entra_is_gone_after_the_next_sync(
    session: Session, fake_entra: FakeEntraServer, fake_graph: FakeGraphServer, tmp_path: Path, config_path: Path
) -> None:
    seed(fake_graph)
    settings = directory_settings(tmp_path, config_path, entra=fake_entra, graph=fake_graph)
    apply_snapshot(session, fetch_entra_directory(settings), now=NOW)

    del fake_graph.users["u-busan"].properties["city"]
    fake_graph.users["u-busan"].properties["department"] = "Support"
    apply_snapshot(session, fetch_entra_directory(settings), now=NOW + timedelta(hours=1))

    rep = directory.user(session, "teams", "u-busan")
    assert rep is not None
    assert "city" not in rep.attributes
    assert rep.attributes["departments"] == ["Support"]
    principal = resolve_principal(session, settings.file, "teams", "u-busan")
    assert principal.attribute("city") is None
    assert principal.attribute("departments") == ("Support",)
    assert principal.attribute("extension_attribute_3") == "KR-26"
