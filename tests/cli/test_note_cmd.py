"""`tablescout note add|list|edit|delete` as a user runs it, on the analysed sample with roles and chat users."""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from core.store.database import open_store
from core.store.embedded import EmbeddedServer
from core.store.repositories import directory
from tests.cli.conftest import Cli
from tests.conftest import create_scratch_database
from tests.support import SAMPLE_ROLES as ROLES
from tests.support import isolated_settings

NOTE_KEYS = {"id", "database", "tables", "text", "author", "private", "created_at", "edited_at"}
SALES = "slack:U_SALES"
GUEST = "slack:U_GUEST"


@pytest.fixture(scope="module")
def noted(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    url = create_scratch_database(store_server.url, "ts_cli").render_as_string(hide_password=False)
    cli = Cli(tmp_path_factory.mktemp("home"), {"TABLESCOUT_DATABASE_URL": url})
    assert cli("init").returncode == 0
    assert cli("sample", "build", "--register").returncode == 0
    analysed = cli("analyze", "--all")
    assert analysed.returncode == 0, analysed.stderr
    config = cli.home / "tablescout.yaml"
    text = config.read_text()
    assert "roles: {}\ngroups: []\n" in text
    config.write_text(text.replace("roles: {}\ngroups: []\n", ROLES))
    store = open_store(isolated_settings(cli.home, database_url=url))
    now = datetime.now(UTC)
    with store.transaction() as session:
        sales = directory.upsert_user(session, platform="slack", user_id="U_SALES", synced_at=now)
        directory.upsert_user(session, platform="slack", user_id="U_GUEST", synced_at=now)
        group = directory.upsert_group(session, platform="slack", group_id="S_SALES", synced_at=now)
        directory.replace_members(session, group, [sales])
    store.close()
    return cli


def listed(cli: Cli, *args: str) -> list[dict[str, Any]]:
    result = cli("note", "list", *args, "--json")
    assert result.returncode == 0, result.stderr
    notes: list[dict[str, Any]] = json.loads(result.stdout)
    return notes


def added(cli: Cli, *args: str) -> dict[str, Any]:
    result = cli("note", "add", *args, "--json")
    assert result.returncode == 0, result.stderr
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def test_add_list_and_the_json_contract(noted: Cli) -> None:
    saved = added(noted, "erp", "ord_mst_bak", "the frobnicated year-end copy; nobody uses it since 2023")
    assert saved == {"id": saved["id"], "database": "erp", "tables": ["ORD_MST_BAK"], "private": False}
    [note] = [n for n in listed(noted) if n["id"] == saved["id"]]
    assert set(note) == NOTE_KEYS
    assert note["author"] == f"operator:{getpass.getuser()}"
    assert note["text"] == "the frobnicated year-end copy; nobody uses it since 2023"
    assert note["tables"] == ["ORD_MST_BAK"]
    assert note["edited_at"] is None
    assert datetime.fromisoformat(note["created_at"]).tzinfo is not None
    assert [n["id"] for n in listed(noted, "erp", "ORD_MST_BAK")] == [saved["id"]]

    text = noted("note", "add", "erp", "ORD_MST, CUST_MST", "[red]orders join customers[/red] on CUST_ID")
    assert text.returncode == 0, text.stderr
    assert "on erp.ORD_MST, erp.CUST_MST" in text.stdout
    table = noted("note", "list", "erp")
    assert "[red]orders join customers[/red]" in table.stdout, "note text is never read as console markup"
    assert "ORD_MST_BAK" in table.stdout

    card = json.loads(noted("card", "erp", "ORD_MST_BAK", "--json").stdout)
    assert any("frobnicated" in n["text"] for n in card["notes"])
    search = json.loads(noted("search", "which frobnicated year-end copy", "--db", "erp", "--json").stdout)
    hit = next(c for c in search["candidates"] if c["table"] == "ORD_MST_BAK")
    assert "note" in hit["matched_by"]


def test_private_notes_and_permissions(noted: Cli) -> None:
    secret = added(noted, "erp", "CUST_MST", "VIP customers have CUST_GRD_CD = 'V'", "--user", SALES, "--private")
    assert secret["private"] is True
    assert secret["id"] in [n["id"] for n in listed(noted, "--user", SALES)]
    assert secret["id"] not in [n["id"] for n in listed(noted, "--user", GUEST)]
    assert secret["id"] in [n["id"] for n in listed(noted)], "the operator sees every note"
    [mine] = [n for n in listed(noted, "--user", SALES) if n["id"] == secret["id"]]
    assert mine["author"] == SALES

    hidden = noted("note", "add", "erp", "EMP_MST", "salaries are monthly", "--user", GUEST)
    assert hidden.returncode == 1
    assert "no table 'EMP_MST' that you may see in erp" in hidden.stderr
    assert "Traceback" not in hidden.stderr
    denied = noted("note", "list", "billing", "--user", GUEST)
    assert denied.returncode == 1
    assert "there is no database 'billing' that you may see" in denied.stderr


def test_edit_and_delete_by_author_or_admin(noted: Cli) -> None:
    saved = added(noted, "erp", "ORD_MST", "STATUS_CODE 90 means cancelled", "--user", SALES)
    refused = noted("note", "edit", str(saved["id"]), "vandalised", "--user", GUEST)
    assert refused.returncode == 1
    assert f"only the author of note #{saved['id']} or an admin may edit it" in refused.stderr
    edited = noted("note", "edit", str(saved["id"]), "STATUS_CODE 90 means cancelled by the customer", "--user", SALES)
    assert edited.returncode == 0, edited.stderr
    assert f"Edited note #{saved['id']}" in edited.stdout
    [note] = [n for n in listed(noted, "erp", "ORD_MST") if n["id"] == saved["id"]]
    assert note["text"] == "STATUS_CODE 90 means cancelled by the customer"
    assert note["edited_at"] is not None
    assert note["author"] == SALES

    not_theirs = noted("note", "delete", str(saved["id"]), "--user", GUEST)
    assert not_theirs.returncode == 1
    assert "may delete it" in not_theirs.stderr
    deleted = noted("note", "delete", str(saved["id"]))
    assert deleted.returncode == 0, deleted.stderr
    assert f"Deleted note #{saved['id']} on ORD_MST" in deleted.stdout
    assert saved["id"] not in [n["id"] for n in listed(noted)]
    again = noted("note", "delete", str(saved["id"]))
    assert again.returncode == 1
    assert f"there is no note #{saved['id']} that you may see" in again.stderr


def test_bad_input_saves_nothing(noted: Cli) -> None:
    before = listed(noted)
    for args, message in [
        (("erp", "ORD_MTS", "typo"), "no table 'ORD_MTS' that you may see in erp; did you mean ORD_MST"),
        (("erp", "ORD_MST", "   "), "the note is empty"),
        (("erp", "ORD_MST", "bad user", "--user", "U_SALES"), "PLATFORM:ID"),
    ]:
        result = noted("note", "add", *args)
        assert result.returncode == 1, args
        assert message in result.stderr
        assert "Traceback" not in result.stderr
    assert listed(noted) == before
    missing_db = noted("note", "list", "nowhere")
    assert missing_db.returncode == 1
    assert "there is no database 'nowhere' that you may see" in missing_db.stderr
