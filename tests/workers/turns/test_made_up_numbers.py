"""A small model's answer may carry only numbers that the question or a tool result holds: one it made up (after its
SQL failed, say) ends the turn as an honest partial answer that does not repeat it."""

from __future__ import annotations

import pytest

from tests.fakes.model_server import Call, FakeOpenAIServer, Say
from tests.turn_world import TurnWorld
from tests.workers.turns.scripts import search_card_sql_answer
from workers.turns.answers import unsupported_numbers

RESULT = "COUNT(*)\n4750\n(1 row)"


@pytest.mark.parametrize(
    ("answer", "missing"),
    [
        ("There were 4,750 orders placed in 2024.", []),
        ("There were 4750 orders.", []),
        ("The total order amount in 2023 was $456,789.", ["456,789"]),
        ("About 4,751 orders.", []),  # within rounding of 4750
        ("About 4,800 orders.", ["4,800"]),
        ("3 tables hold orders; 2 are copies.", []),  # small counts need no source
        ("Average amount: 1234.57", ["1234.57"]),
    ],
)
def test_numbers_the_sources_do_not_hold(answer: str, missing: list[str]) -> None:
    assert unsupported_numbers(answer, ["How many orders were placed in 2024?", RESULT]) == missing
    assert unsupported_numbers("Average amount: 1234.57", ["AVG\n1234.5678\n(1 row)"]) == []


def test_a_made_up_number_is_not_passed_on_as_the_answer(turn_world: TurnWorld, fake_openai: FakeOpenAIServer) -> None:
    question = "What was the total order amount in 2023?"
    failing = [f"SELECT SUM({column}) FROM ORD_MST" for column in ("ORDER_AMT", "AMOUNT", "TOTAL")]
    fake_openai.script(
        [
            Call("search_tables", {"question": question}),
            Call("open_table_card", {"database": "erp", "table": "ORD_MST"}),
            *(Call("run_sql", {"database": "erp", "sql": sql}) for sql in failing),
            Say("The total order amount in 2023 was $456,789."),
        ]
    )
    turn_id = turn_world.submit(question, thread="made-up number")
    turn_world.run(turn_world.environment(fake_openai, model="local:small", turn_path="loop"), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial", stored
    assert stored["error"] == "unsupported number"
    assert stored["answer"].startswith(
        "I could not finish this answer: the model's answer gave 456,789, which no query returned."
    )
    assert "456,789" not in stored["answer"].split("\n", 1)[1]

    # numbers from the rows, and from the SQL that was run (the amount it filtered on), are the model's to repeat
    big = "SELECT COUNT(*) FROM ORD_MST WHERE TOT_AMT > 123457"
    fake_openai.script(
        search_card_sql_answer("How many orders were big?", lambda _table: big, "Orders over 123,457: {value}.")
    )
    answered = turn_world.submit("How many orders were big?", thread="supported number")
    turn_world.run(turn_world.environment(fake_openai, model="local:small", turn_path="loop"), answered)
    assert turn_world.turn(answered)["status"] == "answered"
    assert turn_world.turn(answered)["answer"] == f"Orders over 123,457: {turn_world.erp_scalar(big)}."
