"""A chat user who may query nothing is told so (whom to ask, what the administrator configures), without a model
turn that has no tools."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ruamel.yaml import YAML

from core.access.permissions import Principal
from core.config.file import ConfigFile
from core.store.repositories import directory
from tests.fakes.model_server import FakeModelServer, Say
from tests.turn_world import TurnWorld
from workers.turns.no_access import NO_SOURCES, no_access_answer

ADMINS = """\
roles:
  staff:
    grants:
      - database: erp
  admin:
    admin: true
    grants:
      - database: "*"
groups:
  - platform: slack
    group: "@data-team"
    roles: [admin]
  - platform: slack
    group: S_TS_ADMINS
    roles: [admin]
  - platform: slack
    group: S_SALES
    roles: [staff]
  - platform: teams
    group: 9f1c0c55-0000-4000-8000-00000000aaaa
    roles: [admin]
"""


def test_a_user_who_may_query_nothing_is_told_whom_to_ask(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    fake_anthropic.script([Say("this reply must never be asked for")])
    turn_id = turn_world.submit("How many orders?", user="U_NONE", thread="T_NO_ACCESS")
    outcome = turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    assert outcome.outcome == "finished"
    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered"
    answer = str(stored["answer"])
    assert answer.startswith("You may not query any database yet, so I cannot answer this.")
    assert "Ask the person who runs tablescout for your workspace to give you access." in answer
    assert "`roles:`" in answer
    assert "your Slack user group to it under `groups:`" in answer
    assert "`default_role:`" in answer
    assert "erp" not in answer
    assert "billing" not in answer  # databases they may not query are not named to them
    assert fake_anthropic.requests == []
    assert stored["result"]["rounds"] == 0


def test_the_answer_names_the_groups_that_hold_an_admin_role(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, tmp_path: Path
) -> None:
    sources = YAML(typ="safe").load(turn_world.settings.config_path.read_text())["sources"]
    config = tmp_path / "tablescout.yaml"
    with config.open("w", encoding="utf-8") as handle:
        YAML().dump({"sources": sources}, handle)
        handle.write(ADMINS)
    with turn_world.installation.store.transaction() as session:
        directory.upsert_group(
            session, platform="slack", group_id="S_TS_ADMINS", handle="ts-admins", synced_at=datetime.now(UTC)
        )
    # U_GUEST is in no mapped group and there is no default role; a note turn is refused the same way
    turn_id = turn_world.submit("remember this: ORD_MST_BAK is a copy", user="U_GUEST", intent="note")
    turn_world.run(turn_world.environment(fake_anthropic, config=config), turn_id)
    answer = str(turn_world.turn(turn_id)["answer"])
    assert "Ask a member of @data-team or @ts-admins (tablescout administrators) to give you access." in answer
    assert fake_anthropic.requests == []


def test_an_installation_without_databases_says_so() -> None:
    empty = ConfigFile()
    principal = Principal(platform="teams", user_id="aad-1", roles=())
    assert no_access_answer(None, empty, principal, registered=0) == NO_SOURCES  # type: ignore[arg-type]
    assert "tablescout source add NAME URL" in NO_SOURCES


def test_teams_users_are_told_of_their_entra_group(turn_world: TurnWorld) -> None:
    principal = Principal(platform="teams", user_id="aad-1", roles=())
    config = ConfigFile.model_validate(YAML(typ="safe").load(ADMINS))
    with turn_world.installation.store.transaction() as session:
        answer = no_access_answer(session, config, principal, registered=2)
    assert "maps your Microsoft Entra ID group to it" in answer
    assert "Ask the person who runs tablescout" in answer  # an Entra group known only by its id is not named
    assert "9f1c0c55" not in answer
