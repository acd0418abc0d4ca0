"""Candidates chosen by execution agreement on the guided path (`workers.turns.candidates`): after the most likely
statement ran, more are sampled for the same prompt until two agree; the result most return is the answer, a split
is said in one line. The turns run against the fake OpenAI-compatible server (a `local:` model) with the real
search, SQL service and store; the choice itself is also checked on records directly."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from tests.fakes.model_server import Call, Exchange, FakeOpenAIServer, Say, Step
from tests.turn_world import TurnWorld
from workers.models.types import ModelError
from workers.tools.base import SqlRecord
from workers.turns.candidates import agreed, choose, result_key

SMALL = {"model": "local:small"}
QUESTION = "How many orders were placed in 2024?"
ORDERS_2024 = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01'"


def candidates_model(*statements: str) -> Callable[[Exchange], Step]:
    """A model that writes `statements` in order, one a SQL call (the last one again after that)."""
    remaining = list(statements)

    def step(exchange: Exchange) -> Step:
        if "run_sql" in exchange.tools:
            return Call("run_sql", {"sql": remaining.pop(0) if len(remaining) > 1 else remaining[0]})
        if "choose_tables" in exchange.tools:
            return Call("choose_tables", {"tables": ["ORD_MST"]})
        return Say("no tool offered")

    return step


def sql_temperatures(server: FakeOpenAIServer) -> list[float | None]:
    return [r.raw.get("temperature") for r in server.requests if "run_sql" in r.exchange.tools]


def test_two_sampled_candidates_that_agree_outvote_the_most_likely_one(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    lines = "SELECT COUNT(DISTINCT ORD_NO) FROM ORD_DTL_H"
    fake_openai.script(candidates_model(lines, ORDERS_2024, ORDERS_2024))
    turn_id = turn_world.submit(QUESTION, thread="candidates outvote")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    expected = turn_world.erp_scalar(ORDERS_2024)
    assert expected != turn_world.erp_scalar(lines)
    assert stored["status"] == "answered", stored
    assert stored["answer"].split("\n")[0] == f"{expected:,} orders were placed in 2024."
    assert stored["tables_used"] == ["erp.ORD_MST"]  # the losing candidate's table is not named as a source
    # the second agreeing statement is the same text: it is not run again
    assert [run["sql"] for run in stored["result"]["sql"]] == [lines, ORDERS_2024]
    guided = stored["result"]["guided"]
    assert guided["candidates"] == {"written": 3, "agreeing": 2, "first": 0}  # outvoted: recorded for the benchmark
    assert guided["model_calls"] == stored["result"]["rounds"] == 3
    assert sql_temperatures(fake_openai) == [0.0, None, None]  # the most likely first, then the service's sampling


def test_a_candidate_that_agrees_in_other_words_ends_the_sampling(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    same = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT LIKE '2024%'"
    fake_openai.script(candidates_model(ORDERS_2024, same, "SELECT 1"))
    turn_id = turn_world.submit(QUESTION, thread="candidates agree")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert stored["result"]["guided"]["candidates"] == {"written": 2, "agreeing": 2, "first": 1}
    assert len(sql_temperatures(fake_openai)) == 2  # the third statement was never asked for
    assert stored["result"]["sql"][-1]["sql"] == ORDERS_2024  # of those that agree, the most likely is the answer


def test_candidates_that_all_disagree_give_the_most_likely_answer_with_its_doubt(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    in_2023 = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT LIKE '2023%'"
    in_2022 = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT LIKE '2022%'"
    fake_openai.script(candidates_model(ORDERS_2024, in_2023, in_2022))
    turn_id = turn_world.submit(QUESTION, thread="candidates split")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial", stored
    lines = stored["answer"].split("\n")
    assert lines[0] == f"{turn_world.erp_scalar(ORDERS_2024):,} orders were placed in 2024."
    assert lines[-1] == (
        "I am not sure of this figure: the queries I wrote for this question disagree "
        f"(another gave {turn_world.erp_scalar(in_2023):,}). Say more about what you mean if it looks wrong."
    )
    assert stored["result"]["sql"][-1]["sql"] == ORDERS_2024  # the answer's result is the last one shown
    guided = stored["result"]["guided"]
    assert guided["candidates"] == {"written": 3, "agreeing": 1, "first": 1}
    assert guided["step"] == "doubt"


def test_one_candidate_when_the_setting_says_so(turn_world: TurnWorld, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(candidates_model(ORDERS_2024, "SELECT 1"))
    turn_id = turn_world.submit(QUESTION, thread="candidates one")
    turn_world.run(turn_world.environment(fake_openai, guided_candidates=1, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert sql_temperatures(fake_openai) == [0.0]
    assert stored["result"]["guided"]["candidates"] == {"written": 1, "agreeing": 1, "first": 1}


# --- the choice on records ----------------------------------------------------------------------------------------


def record(*rows: list[object], columns: int = 1, error: str | None = None) -> SqlRecord:
    return SqlRecord("db", "SELECT …", [f"c{i}" for i in range(columns)], [list(r) for r in rows], False, error)


def test_results_agree_whatever_their_row_order_and_number_type() -> None:
    a = record(["Busan", Decimal("3.50")], ["Seoul", 2], columns=2)
    b = record(["Seoul", 2.0], ["Busan ", 3.5], columns=2)
    assert result_key(a) == result_key(b)
    assert result_key(record([1])) != result_key(record([1], [1]))  # the same rows, counted twice, differ
    assert result_key(record([1, 2], columns=2)) != result_key(record([1]))


def test_rows_beat_an_empty_result_and_the_most_likely_breaks_a_tie() -> None:
    first, empty, also_empty, rows = record(), record([0]), record(), record([7])
    assert choose(first, [first, empty, also_empty, rows]).record is rows
    one, two = record([1]), record([2])
    chosen = choose(one, [one, two])
    assert (chosen.record, chosen.agreeing, chosen.other) == (one, 1, two)
    failed = record(error="no such column")
    assert choose(one, [one, failed, None]).other is None  # a failure is no vote against the answer


def test_sampling_stops_when_two_agree_or_the_model_cannot_be_reached() -> None:
    written = [record([2]), record([1]), record([5])]
    asked: list[int] = []

    def write() -> SqlRecord | None:
        asked.append(1)
        return written.pop(0)

    chosen = agreed(record([1]), write, most=5)
    assert (len(asked), chosen.written, chosen.agreeing) == (2, 3, 2)

    def unreachable() -> SqlRecord | None:
        raise ModelError("the model service refused the request")

    first = record([1])
    alone = agreed(first, unreachable, most=3)
    assert (alone.record, alone.written) == (first, 1)


@pytest.mark.parametrize("most", [1, 2])
def test_no_candidate_beyond_the_setting(most: int) -> None:
    calls: list[int] = []

    def write() -> SqlRecord | None:
        calls.append(1)
        return record([len(calls) + 10])

    assert agreed(record([1]), write, most=most).written == most
    assert len(calls) == most - 1
