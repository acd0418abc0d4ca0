"""A user never reads, through cards, search, join paths, table lists, notes or the copy rule, what their role
denies (SPEC §6; issue 14 items 1, 2, 4 and the copy rule of 5), on every engine: turns with a scripted model run
the real tools, and `tablescout card` / `search --json` run as the user would."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from sqlalchemy import delete, func, select

from core.access.permissions import Principal, resolve_principal
from core.access.users import UserRef
from core.store.models import Note
from search.notes import list_notes, save_note
from tests.fakes.model_server import Call, FakeModelServer, Say
from tests.support import run_cli
from tests.workers.turns.leak_world import EMPLOYEE, ENGINES, SALARY, SECRET, LeakWorld, leak_world
from workers.turns.state import TurnEnvironment

__all__ = ["leak_world"]  # the fixture, used by the tests below

NOTE_SECRET = "CANARY-NOTE-5150: payroll numbers for the order desk"


def _leaks(text: str) -> list[str]:
    return [canary for canary in (SECRET, str(SALARY), f"{SALARY:,}", EMPLOYEE, NOTE_SECRET[:17]) if canary in text]


def _tools(
    world: LeakWorld, server: FakeModelServer, user: str, calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[str]:
    """Run one turn whose model makes `calls` in order; the tool results it read, in order."""
    server.script([*(Call(tool, args) for tool, args in calls), Say("done")])
    first = len(server.requests)
    env: TurnEnvironment = world.world.environment(server)
    turn_id = world.world.submit("Who placed the orders and what do they earn?", user=user)
    world.world.run(env, turn_id)
    results = []
    for index, (tool, _args) in enumerate(calls, start=1):
        results.append(server.requests[first + index].exchange.tool_results[tool])
    return results


@pytest.fixture
def shared_note(leak_world: LeakWorld) -> Iterator[None]:
    """A shared note attached to the allowed ORD_MST and the denied EMP_MST of every canary source."""
    store = leak_world.world.installation.store
    with store.transaction() as session:
        before = session.scalar(select(func.max(Note.id))) or 0
        for database in leak_world.databases.values():
            save_note(
                session,
                Principal.for_operator(),
                leak_world.world.encoders.embedder,
                database=database,
                tables=["ORD_MST", "EMP_MST"],
                text=NOTE_SECRET,
                author=UserRef("slack", "U_ALL"),
                private=False,
            )
    yield
    with store.transaction() as session:
        session.execute(delete(Note).where(Note.id > before))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_view_over_a_denied_table_is_as_denied_as_the_table(
    leak_world: LeakWorld, fake_anthropic: FakeModelServer, engine: str
) -> None:
    db = leak_world.databases[engine]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_table_card", {"database": db, "table": "ORD_EMP_V"}),
        ("open_table_card", {"database": db, "table": "PAY_V"}),
        ("search_tables", {"question": "employee name salary secret text of each order", "databases": [db]}),
        ("list_tables", {"database": db}),
        ("find_join_path", {"database": db, "tables": ["ORD_MST", "ORD_EMP_V"]}),
    ]
    allowed = _tools(leak_world, fake_anthropic, "U_ALL", calls[:1])
    assert SECRET in allowed[0], "the view's card holds the planted secret for a user who may read EMP_MST"
    view_card, nested_card, search, listed, joins = _tools(leak_world, fake_anthropic, "U_STAFF", calls)
    assert "no permission" in view_card
    assert _leaks(view_card) == []
    assert "no permission" in nested_card
    assert _leaks(nested_card) == []
    assert _leaks(search) == []
    ranked = [line.split(" ", 2)[1] for line in search.splitlines() if line[:1].isdigit()]
    assert not any(name.endswith((".ORD_EMP_V", ".PAY_V")) for name in ranked), search
    assert "ORD_EMP_V" not in listed
    assert "PAY_V" not in listed
    assert "ORD_MST" in listed
    assert "no permission" in joins
    assert _leaks(joins) == []


def test_a_bare_pattern_does_not_allow_a_view_of_that_name_in_another_schema(
    leak_world: LeakWorld, fake_anthropic: FakeModelServer
) -> None:
    db = leak_world.databases["postgres"]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_table_card", {"database": db, "table": "rpt.ORD_MST"}),
        ("open_table_card", {"database": db, "table": "ORD_MST"}),
        ("list_tables", {"database": db}),
        ("search_tables", {"question": "employee salary secret", "databases": [db]}),
    ]
    rpt_card, live_card, listed, search = _tools(leak_world, fake_anthropic, "U_ORD", calls)
    assert "no permission" in rpt_card
    assert _leaks(rpt_card) == []
    assert "Table ORD_MST" in live_card
    assert _leaks(live_card) == []
    assert "rpt." not in listed
    assert "ORD_MST" in listed
    assert _leaks(search) == []
    assert "ORD_MST [view" not in search


@pytest.mark.parametrize("engine", ENGINES)
def test_code_meanings_from_a_denied_table_are_not_shown(
    leak_world: LeakWorld, fake_anthropic: FakeModelServer, engine: str
) -> None:
    db = leak_world.databases[engine]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_table_card", {"database": db, "table": "ORD_MST", "columns": ["EMP_NO"]}),
        ("search_tables", {"question": "orders by employee number", "databases": [db], "k": 3}),
    ]
    [allowed_card] = _tools(leak_world, fake_anthropic, "U_ALL", calls[:1])
    assert f"2021002={EMPLOYEE}" in allowed_card
    assert "(from EMP_MST)" in allowed_card
    card, search = _tools(leak_world, fake_anthropic, "U_STAFF", calls)
    assert "EMP_NO" in card
    assert "2021002" in card, "the codes themselves are the order table's own values"
    assert _leaks(card) == []
    assert "from EMP_MST" not in card
    assert "ORD_MST" in search
    assert _leaks(search) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_note_on_a_denied_and_an_allowed_table_shows_nowhere(
    leak_world: LeakWorld, fake_anthropic: FakeModelServer, shared_note: None, engine: str
) -> None:
    db = leak_world.databases[engine]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_table_card", {"database": db, "table": "ORD_MST"}),
        ("search_tables", {"question": "payroll numbers for the order desk", "databases": [db]}),
    ]
    [allowed_card] = _tools(leak_world, fake_anthropic, "U_ALL", calls[:1])
    assert NOTE_SECRET in allowed_card
    card, search = _tools(leak_world, fake_anthropic, "U_STAFF", calls)
    assert NOTE_SECRET[:17] not in card
    assert NOTE_SECRET[:17] not in search
    with leak_world.world.installation.store.transaction() as session:
        staff = resolve_principal(session, leak_world.world.settings.file, "slack", "U_STAFF")
        assert list_notes(session, staff, UserRef("slack", "U_STAFF")) == []
        everything = resolve_principal(session, leak_world.world.settings.file, "slack", "U_ALL")
        assert len(list_notes(session, everything, UserRef("slack", "U_ALL"))) == len(ENGINES)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_copy_rule_never_answers_before_the_permission_check(
    leak_world: LeakWorld, fake_anthropic: FakeModelServer, engine: str
) -> None:
    db = leak_world.databases[engine]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("run_sql", {"database": db, "sql": "SELECT COUNT(*) FROM EMP_MST_TMP"}),
    ]
    [allowed] = _tools(leak_world, fake_anthropic, "U_ALL", calls)
    assert "copy of EMP_MST" in allowed, "the copy rule applies to a user who may see both tables"
    [denied] = _tools(leak_world, fake_anthropic, "U_STAFF", calls)
    assert "no permission" in denied
    assert "copy" not in denied
    assert "staging" not in denied


def _cli(world: LeakWorld, *args: str) -> Any:
    settings = world.world.settings
    assert settings.database_url is not None
    return run_cli(settings.home, *args, env={"TABLESCOUT_DATABASE_URL": settings.database_url.get_secret_value()})


def test_card_and_search_commands_show_what_the_user_may_see(leak_world: LeakWorld, shared_note: None) -> None:
    db = leak_world.databases["sqlite"]
    operator = _cli(leak_world, "card", db, "ORD_EMP_V", "--json")
    assert operator.returncode == 0, operator.stderr
    assert SECRET in operator.stdout
    denied = _cli(leak_world, "card", db, "ORD_EMP_V", "--user", "slack:U_STAFF", "--json")
    assert denied.returncode != 0
    assert _leaks(denied.stdout + denied.stderr) == []
    card = _cli(leak_world, "card", db, "ORD_MST", "--user", "slack:U_STAFF", "--json")
    assert card.returncode == 0, card.stderr
    body = json.loads(card.stdout)
    assert body["notes"] == []
    assert _leaks(card.stdout) == []
    question = "employee salary payroll order desk"
    search = _cli(leak_world, "search", question, "--db", db, "--user", "slack:U_STAFF", "--json")
    assert search.returncode == 0, search.stderr
    found = json.loads(search.stdout)
    assert {c["table"] for c in found["candidates"]}.isdisjoint({"ORD_EMP_V", "PAY_V", "EMP_MST", "EMP_MST_TMP"})
    assert _leaks(search.stdout) == []
