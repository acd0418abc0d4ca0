"""The chart an answer carries: it goes to JSON under `chart` and comes back the same; a chart that cannot be read
is dropped and the rest of the answer kept."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from core.answer.model import Answer, Chart, ResultTable


def _chart(**changes: object) -> Chart:
    fields: dict[str, object] = {
        "type": "line",
        "title": "Orders per month in 2024",
        "x": "month",
        "y": ["orders"],
        "spec": {"mark": {"type": "line"}, "data": {"values": [{"month": "2024-01-01", "orders": 3}]}},
        "image": "/var/lib/tablescout/charts/turn-7.png",
        "alt": "Line chart of Orders by Month: 1 point; the highest is 3 in January 2024.",
    }
    return Chart.model_validate(fields | changes)


def _answer(chart: Chart | None) -> Answer:
    table = ResultTable(database="erp", sql="SELECT 1", columns=["month", "orders"], rows=[["2024-01-01", 3]])
    return Answer(status="answered", text="3 orders.", results=[table], chart=chart)


def test_an_answer_with_a_chart_comes_back_the_same_through_json() -> None:
    answer = _answer(_chart())
    stored = json.loads(json.dumps(answer.to_json()))
    assert stored["chart"]["type"] == "line"
    assert stored["chart"]["y"] == ["orders"]
    assert stored["chart"]["spec"]["data"]["values"] == [{"month": "2024-01-01", "orders": 3}]
    assert Answer.from_stored(stored) == answer


def test_an_answer_without_a_chart_says_null_and_reads_back_without_one() -> None:
    stored = _answer(None).to_json()
    assert stored["chart"] is None
    assert Answer.from_stored(stored).chart is None


def test_an_answer_stored_before_charts_existed_reads_back_without_one() -> None:
    stored = _answer(None).to_json()
    del stored["chart"]
    assert Answer.from_stored(stored) == _answer(None)


def test_a_chart_not_rendered_keeps_its_spec_and_no_image() -> None:
    answer = _answer(_chart(image=None, type="bar", y=["amount", "orders"]))
    back = Answer.from_stored(answer.to_json())
    assert back.chart is not None
    assert back.chart.image is None
    assert back.chart.type == "bar"
    assert back.chart.y == ["amount", "orders"]


@pytest.mark.parametrize(
    "bad",
    [
        "a line",
        ["line"],
        {"type": "pie", "x": "month", "y": ["orders"]},
        {"type": "line", "y": ["orders"]},
        {"type": "line", "x": "month", "y": []},
        {"type": "line", "x": "month", "y": ["a", "b", "c"]},
        {"type": "line", "x": "month", "y": ["orders"], "spec": "not a spec"},
    ],
)
def test_a_chart_that_cannot_be_read_is_dropped_and_the_answer_kept(bad: object) -> None:
    stored = _answer(None).to_json() | {"chart": bad}
    back = Answer.from_stored(stored)
    assert back.status == "answered"
    assert back.text == "3 orders."
    assert back.results[0].rows == [["2024-01-01", 3]]
    assert back.chart is None


def test_a_chart_is_frozen_and_ignores_keys_it_does_not_know() -> None:
    chart = Chart.model_validate({"type": "bar", "x": "city", "y": ["amount"], "colour": "blue"})
    assert chart.image is None
    assert chart.spec == {}
    with pytest.raises(ValidationError):
        chart.title = "changed"  # type: ignore[misc]
