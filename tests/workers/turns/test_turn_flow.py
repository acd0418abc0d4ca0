"""A question runs search → card → SQL → answer through the real providers, and everything is stored."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.store.models import ExecutedSql, Round, ToolCall
from tests.fakes.model_server import Call, FakeModelServer, Say
from tests.turn_world import TurnWorld
from tests.workers.turns.scripts import ORDERS_2024, candidates, search_card_sql_answer


@pytest.fixture(params=["anthropic", "openai"])
def model_server(request: pytest.FixtureRequest) -> FakeModelServer:
    return request.getfixturevalue(f"fake_{request.param}")  # type: ignore[no-any-return]


def test_question_gets_the_live_tables_number(turn_world: TurnWorld, model_server: FakeModelServer) -> None:
    question = "How many orders were placed in 2024?"
    model_server.script(
        search_card_sql_answer(
            question,
            lambda table: ORDERS_2024.replace("ORD_MST", table),
            "{value} orders were placed in 2024 (table {table}).",
        )
    )
    turn_id = turn_world.submit(question)
    outcome = turn_world.run(turn_world.environment(model_server), turn_id)
    assert outcome.outcome == "finished"
    stored = turn_world.turn(turn_id)
    expected = turn_world.erp_scalar(ORDERS_2024)
    assert expected > 0
    assert stored["status"] == "answered"
    assert stored["answer"] == f"{expected} orders were placed in 2024 (table ORD_MST)."
    assert stored["tables_used"] == ["erp.ORD_MST"]
    assert stored["result"]["rounds"] == 4
    [run] = stored["result"]["sql"]
    assert run["rows"] == [[expected]]
    assert run["error"] is None
    assert run["truncated"] is False

    search_text = model_server.requests[1].exchange.tool_results["search_tables"]
    ranked = [t for _, t, _ in candidates(search_text)]
    assert ranked.index("ORD_MST") < ranked.index("ORD_MST_BAK")

    with turn_world.installation.store.transaction() as session:
        rounds = session.scalars(select(Round).where(Round.turn_id == turn_id).order_by(Round.ordinal)).all()
        assert [r.ordinal for r in rounds] == [1, 2, 3, 4]
        assert all(r.input_tokens and r.output_tokens for r in rounds)
        calls = session.scalars(
            select(ToolCall).join(Round).where(Round.turn_id == turn_id).order_by(Round.ordinal)
        ).all()
        assert [c.tool for c in calls] == ["search_tables", "open_table_card", "run_sql"]
        assert all(c.result_chars > 0 and c.duration_ms is not None for c in calls)
        assert "ORD_MST" in (calls[0].result_text or "")  # the candidate list is kept for the operator
        audit = session.scalars(select(ExecutedSql).where(ExecutedSql.turn_id == turn_id)).all()
        assert [(a.status, a.row_count, a.user_id) for a in audit] == [("ok", 1, "U_SALES")]
        assert audit[0].tool_call_id == calls[2].id


def test_failing_sql_goes_back_and_the_next_round_fixes_it(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    fake_anthropic.script(
        [
            Call("open_table_card", {"database": "erp", "table": "ORD_MST"}),
            Call("run_sql", {"database": "erp", "sql": "SELECT SUM(ORD_AMT) FROM ORD_MST"}),
            Call("run_sql", {"database": "erp", "sql": "SELECT SUM(TOT_AMT) FROM ORD_MST"}),
            Say("done"),
        ]
    )
    turn_id = turn_world.submit("What is the total order amount?")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    failed = fake_anthropic.requests[2].exchange
    assert "run_sql" in failed.tool_errors
    assert "ORD_AMT" in failed.tool_results["run_sql"]
    fixed = fake_anthropic.requests[3].exchange
    assert "run_sql" not in fixed.tool_errors
    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered"
    first, second = stored["result"]["sql"]
    assert first["error"] is not None
    assert second["error"] is None
    assert second["rows"][0][0] == pytest.approx(float(turn_world.erp_scalar("SELECT SUM(TOT_AMT) FROM ORD_MST")))


def test_round_limit_gives_an_honest_partial_answer(turn_world: TurnWorld, fake_openai: FakeModelServer) -> None:
    fake_openai.script(lambda exchange: Call("list_tables", {"database": "erp", "pattern": "ORD*"}))
    turn_id = turn_world.submit("Which orders are late?")
    outcome = turn_world.run(turn_world.environment(fake_openai, max_rounds=3), turn_id)
    assert outcome.status == "partial"
    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial"
    assert stored["answer"].startswith("I could not finish this answer: it needed more than 3 rounds")
    assert len(fake_openai.requests) == 3


def test_deadline_gives_an_honest_partial_answer(turn_world: TurnWorld, fake_anthropic: FakeModelServer) -> None:
    from tests.fakes.model_server import Slow

    fake_anthropic.script([Call("list_tables", {"database": "erp"}), Slow(10, Say("too late"))])
    turn_id = turn_world.submit("Which tables hold orders?")
    outcome = turn_world.run(turn_world.environment(fake_anthropic, turn_deadline_s=4), turn_id)
    assert outcome.status == "partial"
    stored = turn_world.turn(turn_id)
    assert "did not answer in time" in stored["answer"]


def test_first_input_lists_databases_and_forbidden_ones_by_name(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    fake_anthropic.script([Say("ok")])
    turn_id = turn_world.submit("How many customers do we have in billing?", user="U_GUEST")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    first = fake_anthropic.requests[0]
    text = first.exchange.user_text
    assert "- erp (SQLite)" in text
    assert "Databases this user may not query: billing" in text
    assert "billing (SQLite)" not in text  # a forbidden database is named only, never with its summary
    assert "Never ask the user for table or column names" in first.exchange.system
    assert set(first.exchange.tools) == {"search_tables", "open_table_card", "find_join_path", "list_tables", "run_sql"}


def test_a_finished_turn_is_not_run_again(turn_world: TurnWorld, fake_anthropic: FakeModelServer) -> None:
    fake_anthropic.script([Say("42")])
    turn_id = turn_world.submit("How many products?")
    env = turn_world.environment(fake_anthropic)
    assert turn_world.run(env, turn_id).outcome == "finished"
    assert turn_world.run(env, turn_id).outcome == "already_finished"
    assert len(fake_anthropic.requests) == 1
