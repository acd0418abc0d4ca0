"""Status lines are read by everyone in a channel: they name a database or table only when the asker may see it."""

from __future__ import annotations

from tests.fakes.model_server import Call, FakeModelServer, Say
from tests.turn_world import TurnWorld
from workers.turns.engine import run_turn


def _status_lines(
    world: TurnWorld,
    server: FakeModelServer,
    user: str,
    calls: list[Call],
    question: str = "Who earns the most?",
    pins: tuple[str, ...] = (),
) -> list[str]:
    server.script([*calls, Say("done")])
    turn_id = world.submit(question, user=user, pins=pins)
    lines: list[str] = []
    run_turn(world.environment(server), turn_id, lines.append)
    return lines


CALLS = [
    Call("open_table_card", {"database": "erp", "table": "EMP_MST"}),
    Call("find_join_path", {"database": "erp", "tables": ["EMP_MST", "ORD_MST"]}),
    Call("list_tables", {"database": "secret_hr"}),
    Call("run_sql", {"database": "erp", "sql": "SELECT MAX(SAL_AMT) FROM EMP_MST"}),
    Call("open_table_card", {"database": "erp", "table": "ORD_MST"}),
]


def test_status_lines_name_only_what_the_asker_may_see(turn_world: TurnWorld, fake_anthropic: FakeModelServer) -> None:
    guest = _status_lines(turn_world, fake_anthropic, "U_GUEST", CALLS)  # the default role: no EMP_*
    assert not any("EMP_MST" in line or "secret_hr" in line for line in guest), guest
    assert "Reading a table…" in guest
    assert "Finding how the tables join…" in guest
    assert "Listing tables…" in guest
    assert "Running SQL on erp…" in guest
    assert "Reading the order master table…" in guest  # business words, not the table's code
    joined = Call("find_join_path", {"database": "erp", "tables": ["ORD_MST", "CUST_MST"]})
    sales = _status_lines(turn_world, fake_anthropic, "U_SALES", [*CALLS[4:], joined])
    assert "Reading the order master table…" in sales
    assert "Finding how order master and customer master join…" in sales


def test_the_search_status_names_what_is_looked_for_in_the_askers_words_and_where(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    question = "How many orders did VIP customers place in 2024?"
    calls = [
        Call("search_tables", {"question": "orders of VIP customers in 2024", "databases": ["erp"]}),
        # The model's own words (a table name from a card, a synonym) are not the asker's: not named.
        Call("search_tables", {"question": "ORD_MST purchase headers", "terms": ["purchases"]}),
        Call("search_tables", {"question": "order count", "databases": ["erp", "billing"]}),
    ]
    lines = _status_lines(turn_world, fake_anthropic, "U_GUEST", calls, question)
    assert "Looking for tables about orders and VIP in erp…" in lines, lines
    assert "Searching tables…" in lines  # nothing of the asker's and no database: the plain line
    assert "Looking for tables about orders in erp…" in lines  # the asker's word; billing is not the guest's
    assert not any("billing" in line or "ORD_MST" in line or "purchase" in line for line in lines), lines


def test_the_search_status_names_the_pinned_database_the_search_is_limited_to(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    calls = [Call("search_tables", {"question": "customers by city", "databases": ["billing"]})]
    lines = _status_lines(turn_world, fake_anthropic, "U_SALES", calls, "customers by city", pins=("erp",))
    assert "Looking for tables about customers and city in erp…" in lines, lines
