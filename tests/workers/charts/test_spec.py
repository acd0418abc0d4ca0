"""The Vega-Lite spec of a chart: the rows inlined in drawing order, the mark, the x axis sorted by time or by the
measure, titles on the chart and both axes, and numbers formatted as everywhere else."""

from __future__ import annotations

import json
from typing import Any

from core.answer.values import ValueKind
from tests.workers.charts.tables import CITY_AMOUNTS, MONTH_COUNTS, cities, months_2024, table
from workers.charts.shape import Shape, shape_of
from workers.charts.spec import fields, vega_lite


def _spec(shape: Shape | None, title: str = "Orders per month in 2024") -> dict[str, Any]:
    assert shape is not None
    return vega_lite(shape, title)


def test_a_time_series_is_a_line_along_a_time_axis_in_time_order() -> None:
    spec = _spec(shape_of(months_2024()))
    assert spec["$schema"].endswith("/vega-lite/v5.json")
    assert spec["title"] == "Orders per month in 2024"
    assert spec["mark"]["type"] == "line"
    x, y = spec["encoding"]["x"], spec["encoding"]["y"]
    assert (x["field"], x["type"], x["scale"]["type"]) == ("month", "temporal", "utc")
    assert x["title"] == "Month"
    assert x["axis"]["format"] == "%b %Y"
    assert (y["field"], y["type"]) == ("orders", "quantitative")
    assert y["title"] == "Orders (count)"
    assert y["axis"]["format"] == ",d"  # counts grouped
    assert spec["data"]["values"] == [
        {"month": f"2024-{m:02d}-01", "orders": MONTH_COUNTS[m - 1]} for m in range(1, 13)
    ]


def test_a_breakdown_is_bars_sorted_by_the_measure_highest_first() -> None:
    spec = _spec(shape_of(cities()), "Order amount by city")
    descending = sorted(CITY_AMOUNTS, key=lambda c: -CITY_AMOUNTS[c])
    assert spec["mark"]["type"] == "bar"
    x, y = spec["encoding"]["x"], spec["encoding"]["y"]
    assert (x["field"], x["type"], x["title"]) == ("city", "nominal", "City")
    assert x["sort"] == descending
    assert [row["city"] for row in spec["data"]["values"]] == descending
    assert y["title"] == "Total amount"
    assert y["axis"]["format"] == ",.2f"  # amounts with two decimals


def test_years_are_never_grouped() -> None:
    spec = _spec(shape_of(table(["year", "orders"], [[2022, 7], [2023, 9], [2024, 10]])))
    x = spec["encoding"]["x"]
    assert (x["type"], x["axis"]["format"], x["axis"]["tickMinStep"]) == ("quantitative", "d", 1)
    assert x["scale"]["zero"] is False


def test_months_by_name_keep_the_calendar_order() -> None:
    spec = _spec(shape_of(table(["mon", "orders"], [["Feb", 2], ["Jan", 5], ["Mar", 1]], [ValueKind.TEXT, None])))
    assert spec["encoding"]["x"]["type"] == "ordinal"
    assert spec["encoding"]["x"]["sort"] == ["Jan", "Feb", "Mar"]


def test_two_measures_of_one_kind_share_an_axis_with_a_legend() -> None:
    rows = [[city, amount, amount / 2] for city, amount in CITY_AMOUNTS.items()]
    kinds = [ValueKind.TEXT, ValueKind.AMOUNT, ValueKind.AMOUNT]
    spec = _spec(shape_of(table(["city", "revenue", "cost"], rows, kinds)))
    assert spec["transform"] == [{"fold": ["revenue", "cost"], "as": ["measure", "value"]}]
    assert spec["encoding"]["y"]["field"] == "value"
    assert spec["encoding"]["y"]["title"] == "Revenue / Cost"
    assert spec["encoding"]["color"]["scale"]["domain"] == ["revenue", "cost"]
    assert spec["encoding"]["xOffset"]["field"] == "measure"  # bars side by side


def test_two_measures_of_different_kinds_get_an_axis_each() -> None:
    rows = [[f"2024-{m:02d}-01", m * 10, m * 1000.5] for m in range(1, 7)]
    kinds = [ValueKind.DATE, ValueKind.COUNT, ValueKind.AMOUNT]
    spec = _spec(shape_of(table(["month", "orders", "revenue_usd"], rows, kinds)))
    assert spec["resolve"] == {"scale": {"y": "independent"}}
    ys = [layer["encoding"]["y"] for layer in spec["layer"]]
    assert [y["field"] for y in ys] == ["orders", "revenue_usd"]
    assert [y["title"] for y in ys] == ["Orders (count)", "Revenue (USD)"]
    assert [y["axis"]["format"] for y in ys] == [",d", ",.2f"]


def test_column_names_vega_lite_reads_as_paths_become_plain_fields() -> None:
    rows = [["North", 500.0, 350.0], ["South", 800.0, 560.0]]
    kinds = [ValueKind.TEXT, ValueKind.AMOUNT, ValueKind.AMOUNT]
    shape = shape_of(table(["o.region", "sum(o.amount)", "sum(o_amount)"], rows, kinds))
    assert shape is not None
    assert fields(shape) == {
        "o.region": "o_region",
        "sum(o.amount)": "sum(o_amount)",
        "sum(o_amount)": "sum(o_amount)_",
    }
    spec = vega_lite(shape, "Amounts")
    assert spec["data"]["values"][0] == {"o_region": "South", "sum(o_amount)": 800.0, "sum(o_amount)_": 560.0}


def test_the_spec_is_plain_json() -> None:
    spec = _spec(shape_of(cities()))
    assert json.loads(json.dumps(spec)) == spec


def test_every_bar_is_labelled_and_many_bars_widen_the_chart() -> None:
    few = _spec(shape_of(cities()))
    assert few["encoding"]["x"]["axis"]["labelOverlap"] is False  # Vega would otherwise drop every other name
    assert few["width"] == 600
    rows = [[f"Customer {i}", 300 - i] for i in range(60)]
    many = _spec(shape_of(table(["customer", "orders"], rows)))
    assert many["width"] == 60 * 16
    assert many["encoding"]["x"]["axis"]["labelAngle"] == -90
