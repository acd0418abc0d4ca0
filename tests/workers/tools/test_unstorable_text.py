"""A NUL character or an unpaired surrogate from the model (in a tool argument or its text) or from a database value
never fails the turn: the call is refused with a message the model can act on, and everything is stored."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.store.models import Round, ToolCall
from tests.fakes.model_server import Call, Exchange, FakeModelServer, Say, Step
from tests.turn_world import TurnWorld

COUNT = "SELECT COUNT(*) FROM ORD_MST"
#: A value that holds a NUL character, in each engine's words.
NUL_VALUE = {
    "sqlite": "SELECT 'a' || char(0) || 'b' AS v",
    "mariadb": "SELECT CONCAT('a', CHAR(0 USING utf8mb4), 'b') AS v",
}


@pytest.fixture(params=["anthropic", "openai"])
def model_server(request: pytest.FixtureRequest) -> FakeModelServer:
    return request.getfixturevalue(f"fake_{request.param}")  # type: ignore[no-any-return]


@pytest.mark.parametrize("engine", ["sqlite", pytest.param("mariadb", marks=pytest.mark.mariadb)])
def test_unstorable_tool_arguments_are_refused_and_the_turn_goes_on(
    engine: str, request: pytest.FixtureRequest, model_server: FakeModelServer
) -> None:
    world: TurnWorld = request.getfixturevalue("turn_world" if engine == "sqlite" else "mariadb_turn_world")

    def model(exchange: Exchange) -> Step:
        steps: dict[int, Step] = {
            1: Call("search_tables", {"question": "orders \ud800 placed", "terms": ["x\x00y"]}),
            2: Call("open_table_card", {"database": "erp", "table": "ORD_MST"}),
            3: Call("run_sql", {"database": "erp", "sql": COUNT + " WHERE ORD_NO = '1\x00'"}),
            4: Call("run_sql", {"database": "erp", "sql": NUL_VALUE[engine]}),
            5: Call("run_sql", {"database": "erp", "sql": COUNT}),
        }
        if exchange.round in steps:
            return steps[exchange.round]
        value = exchange.tool_results["run_sql"].splitlines()[1]
        return Say(f"There are {value} orders.\x00 \udc80")

    model_server.script(model)
    turn_id = world.submit("How many orders are there?", thread=f"T_NUL_{engine}_{model_server.__class__.__name__}")
    outcome = world.run(world.environment(model_server), turn_id)

    assert outcome.outcome == "finished"
    stored = world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert stored["answer"] == f"There are {world.erp_scalar(COUNT)} orders. \ufffd"
    exchanges = [r.exchange for r in model_server.requests]
    search = exchanges[1]
    assert "search_tables" in search.tool_errors
    assert "an unpaired surrogate (U+D800)" in search.tool_results["search_tables"]
    assert "a NUL character (U+0000)" in search.tool_results["search_tables"]
    refused = exchanges[3]
    assert "run_sql" in refused.tool_errors
    assert "a NUL character (U+0000)" in refused.tool_results["run_sql"]
    assert "nothing was run" in refused.tool_results["run_sql"]
    value = exchanges[4]
    assert "run_sql" not in value.tool_errors  # a value holding NUL is shown without it
    assert "ab" in value.tool_results["run_sql"]
    runs = stored["result"]["sql"]
    assert [r["rows"] for r in runs] == [[["ab"]], [[world.erp_scalar(COUNT)]]]  # the refused call ran nothing
    with world.installation.store.transaction() as session:
        calls = session.scalars(
            select(ToolCall).join(Round).where(Round.turn_id == turn_id).order_by(Round.ordinal, ToolCall.ordinal)
        ).all()
        assert [c.tool for c in calls] == ["search_tables", "open_table_card", "run_sql", "run_sql", "run_sql"]
        assert calls[0].arguments == {"question": "orders \ufffd placed", "terms": ["xy"]}  # kept for the operator
        assert "NUL" in (calls[2].error or "")
