"""Status lines are read by everyone in a channel: they name a database or table only when the asker may see it."""

from __future__ import annotations

from tests.fakes.model_server import Call, FakeModelServer, Say
from tests.turn_world import TurnWorld
from workers.turns.engine import run_turn


def _status_lines(world: TurnWorld, server: FakeModelServer, user: str, calls: list[Call]) -> list[str]:
    server.script([*calls, Say("done")])
    turn_id = world.submit("Who earns the most?", user=user)
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
    assert "Opening a table…" in guest
    assert "Finding how the tables join…" in guest
    assert "Listing tables…" in guest
    assert "Running SQL on erp…" in guest
    assert "Opening ORD_MST…" in guest
    sales = _status_lines(turn_world, fake_anthropic, "U_SALES", CALLS[4:])
    assert "Opening ORD_MST…" in sales
