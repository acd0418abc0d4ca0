"""Follow-ups that re-present the last result ("as a bar chart", "as a table") and `@name` pins that match nothing."""

from __future__ import annotations

import pytest

from core.access.permissions import resolve_principal
from core.access.users import UserRef
from core.answer.model import Answer
from core.store.models import Turn
from core.text.pins import unknown_pins
from tests.fakes.model_server import Call, FakeModelServer, Say
from tests.turn_world import TurnWorld
from workers.turns.follow_ups import PresentationRequest, presentation_asked, reusable_answer

BY_MONTH = (
    "SELECT substr(ORD_DT, 1, 7) || '-01' AS month, COUNT(*) AS orders FROM ORD_MST "
    "WHERE ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01' GROUP BY 1 ORDER BY 1"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("as a chart", PresentationRequest("chart")),
        ("Show that as a bar chart please.", PresentationRequest("chart", "bar")),
        ("can you plot it", PresentationRequest("chart")),
        ("now as a line graph instead", PresentationRequest("chart", "line")),
        ("in a table", PresentationRequest("table")),
        ("show me the results as a table", PresentationRequest("table")),
        ("막대 차트로 보여줘", PresentationRequest("chart", "bar")),
        ("표로 보여주세요", PresentationRequest("table")),
        ("show the orders by month as a chart", None),  # a new question, answered (and charted) in full
        ("by week instead", None),  # changes the SQL: the model's
        ("what is a chart of accounts?", None),
        ("How many orders were placed in 2024?", None),
    ],
)
def test_a_presentation_follow_up_is_only_a_message_that_asks_nothing_else(
    text: str, expected: PresentationRequest | None
) -> None:
    assert presentation_asked(text) == expected


def test_unknown_pins_are_the_standalone_names_that_match_no_database() -> None:
    labels = {"erp", "billing", "sales"}
    assert unknown_pins("@crm how many customers? @erp", labels) == ["crm"]
    assert unknown_pins("orders in @Sales and @hr, @hr (@fin)", labels) == ["hr", "fin"]
    assert unknown_pins("mail ops@erp.example or @crm.example.com", labels) == []


def test_as_a_bar_chart_redraws_the_last_result_without_a_model_call_or_sql(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    fake_anthropic.script([Call("run_sql", {"database": "erp", "sql": BY_MONTH}), Say("Orders by month in 2024.")])
    env = turn_world.environment(fake_anthropic)
    asked = turn_world.submit("How many orders were placed each month in 2024?", thread="T_FOLLOW")
    turn_world.run(env, asked)
    first = Answer.from_stored(turn_world.turn(asked)["result"])
    assert first.chart is not None
    assert first.chart.type == "line"
    calls = len(fake_anthropic.requests)

    bars = turn_world.submit("show that as a bar chart", thread="T_FOLLOW")
    turn_world.run(env, bars)
    table = turn_world.submit("as a table", thread="T_FOLLOW")
    turn_world.run(env, table)

    assert len(fake_anthropic.requests) == calls  # neither follow-up asked the model
    redrawn = Answer.from_stored(turn_world.turn(bars)["result"])
    assert redrawn.status == "answered"
    assert redrawn.chart is not None
    assert (redrawn.chart.type, redrawn.chart.title) == ("bar", first.chart.title)
    assert redrawn.chart.spec["mark"]["type"] == "bar"
    assert redrawn.chart.png() is not None
    assert redrawn.results == first.results
    assert redrawn.tables_used == first.tables_used
    tabled = Answer.from_stored(turn_world.turn(table)["result"])
    assert tabled.chart is None
    assert tabled.results == first.results
    assert tabled.text == "Orders by month in 2024."
    with turn_world.installation.store.transaction() as session:
        turn = session.get(Turn, table)
        assert turn is not None
        principal = resolve_principal(session, turn_world.settings.file, "slack", "U_GUEST")
        # another user's "as a chart" in the same thread never reuses rows that were filtered for the asker
        assert reusable_answer(session, principal, turn, UserRef("slack", "U_GUEST")) is None
        owner = resolve_principal(session, turn_world.settings.file, "slack", "U_SALES")
        assert reusable_answer(session, owner, turn, UserRef("slack", "U_SALES")) is not None


def test_a_pin_that_matches_no_database_is_answered_with_the_ones_the_user_may_ask(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    turn_id = turn_world.submit("@crm how many customers signed up in 2024?", thread="T_PIN")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    stored = turn_world.turn(turn_id)
    assert fake_anthropic.requests == []
    assert stored["status"] == "answered"
    head, _, rest = stored["answer"].partition(" You can ask about ")
    assert head == "There is no database called @crm."
    listed, _, how = rest.partition(": ")
    assert sorted(listed.split(" and ")) == ["billing", "erp"]
    assert how.startswith("pin one with @")
    guest = turn_world.submit("@crm how many customers?", user="U_GUEST", thread="T_PIN_GUEST")
    turn_world.run(turn_world.environment(fake_anthropic), guest)
    # billing, which the guest may not query, is never named to them
    assert "You can ask about erp: pin one with @erp" in turn_world.turn(guest)["answer"]
