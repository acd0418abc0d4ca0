"""Which results make a chart: a series over time is a line sorted by time, a breakdown by a category is bars sorted
by the measure, highest first; a single number, one row, more than 60 rows, no measure or three measures make none."""

from __future__ import annotations

import pytest

from core.answer.values import ValueKind
from tests.workers.charts.tables import CITY_AMOUNTS, cities, months_2024, table
from workers.charts.shape import chartable, shape_of


def test_months_with_counts_are_a_line_sorted_by_time() -> None:
    shape = shape_of(months_2024())
    assert shape is not None
    assert shape.type == "line"
    assert shape.x == "month"
    assert shape.axis == "temporal"
    assert [m.name for m in shape.measures] == ["orders"]
    assert shape.measures[0].kind is ValueKind.COUNT
    assert [p.x for p in shape.points] == [f"2024-{m:02d}-01" for m in range(1, 13)]


def test_cities_with_amounts_are_bars_sorted_by_the_amount_highest_first() -> None:
    shape = shape_of(cities())
    assert shape is not None
    assert (shape.type, shape.x, shape.axis) == ("bar", "city", "category")
    assert [p.x for p in shape.points] == sorted(CITY_AMOUNTS, key=lambda c: -CITY_AMOUNTS[c])
    assert shape.points[0].values == (12_345.50,)


def test_two_measures_are_both_drawn() -> None:
    rows = [[city, amount, int(amount // 100)] for city, amount in CITY_AMOUNTS.items()]
    shape = shape_of(table(["city", "revenue", "orders"], rows, [ValueKind.TEXT, ValueKind.AMOUNT, ValueKind.COUNT]))
    assert shape is not None
    assert [m.name for m in shape.measures] == ["revenue", "orders"]
    assert shape.points[0].values == (12_345.50, 123)


@pytest.mark.parametrize(
    ("columns", "rows"),
    [
        (["orders"], [[4750]]),  # a single number
        (["month", "orders"], [["2024-01-01", 31]]),  # one row
        (["day", "orders"], [[f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}", i] for i in range(61)]),  # 61 rows
        (["city", "region"], [["Seoul", "Capital"], ["Busan", "South"]]),  # no measure
        (["city", "a", "b", "c"], [["Seoul", 1, 2, 3], ["Busan", 4, 5, 6]]),  # three measures
        (["orders", "returns"], [[1, 2], [3, 4]]),  # measures and nothing to lay them along
        (["city", "orders"], [["Seoul", 3], ["Seoul", 4], ["Busan", 5]]),  # a city twice: not one point each
        (["city", "orders"], [["Seoul", 3], [None, 4]]),  # a point without a name
        (["city", "orders"], [["Seoul", "many"], ["Busan", "few"]]),  # not numbers
        (["city", "orders"], [["Seoul", None], ["Busan", None]]),  # nothing to draw
    ],
)
def test_other_shapes_make_no_chart(columns: list[str], rows: list[list[object]]) -> None:
    assert shape_of(table(columns, rows)) is None


def test_sixty_rows_still_make_a_chart() -> None:
    rows = [[f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}", i] for i in range(60)]
    assert shape_of(table(["day", "orders"], rows)) is not None


def test_a_truncated_or_failed_result_makes_no_chart() -> None:
    assert shape_of(months_2024().model_copy(update={"truncated": True})) is None
    assert shape_of(months_2024().model_copy(update={"error": "relation does not exist"})) is None


def test_years_are_a_line_of_whole_years() -> None:
    rows = [[2024, 10], [2022, 7], [2023, 9]]
    shape = shape_of(table(["order_year", "orders"], rows))
    assert shape is not None
    assert (shape.type, shape.axis) == ("line", "year")
    assert [p.x for p in shape.points] == [2022, 2023, 2024]


@pytest.mark.parametrize(
    ("values", "axis", "ordered"),
    [
        (["Mar", "Jan", "Feb"], "month", ["Jan", "Feb", "Mar"]),
        (["March", "January", "february"], "month", ["January", "february", "March"]),
        (["2024-Q2", "2023-Q4", "2024-Q1"], "quarter", ["2023-Q4", "2024-Q1", "2024-Q2"]),
        (["2024-03", "2024-01", "2024-02"], "temporal", ["2024-01", "2024-02", "2024-03"]),
    ],
)
def test_text_holding_time_is_a_line_in_calendar_order(values: list[str], axis: str, ordered: list[str]) -> None:
    shape = shape_of(table(["period", "orders"], [[v, i + 1] for i, v in enumerate(values)], [ValueKind.TEXT, None]))
    assert shape is not None
    assert (shape.type, shape.axis) == ("line", axis)
    assert [p.x for p in shape.points] == ordered


def test_a_breakdown_prefers_names_to_codes_and_ids() -> None:
    rows = [[7, "B20", "Electronics", 120], [3, "A10", "Food", 80]]
    kinds = [ValueKind.IDENTIFIER, ValueKind.CODE, ValueKind.TEXT, ValueKind.COUNT]
    shape = shape_of(table(["category_id", "category_code", "category", "products"], rows, kinds))
    assert shape is not None
    assert shape.x == "category"


def test_a_breakdown_by_codes_when_there_is_no_name() -> None:
    shape = shape_of(table(["region_cd", "orders"], [["R1", 5], ["R2", 9]], [ValueKind.CODE, ValueKind.COUNT]))
    assert shape is not None
    assert (shape.type, shape.x) == ("bar", "region_cd")
    assert [p.x for p in shape.points] == ["R2", "R1"]


def test_a_breakdown_that_repeats_one_year_is_still_drawn_by_its_category() -> None:
    rows = [[2024, city, amount] for city, amount in CITY_AMOUNTS.items()]
    shape = shape_of(table(["year", "city", "amount"], rows, [ValueKind.YEAR, ValueKind.TEXT, ValueKind.AMOUNT]))
    assert shape is not None
    assert (shape.type, shape.x) == ("bar", "city")


def test_chartable_is_the_last_result_that_makes_a_chart() -> None:
    single = table(["orders"], [[4750]])
    assert chartable([months_2024(), cities(), single]) == cities()
    assert chartable([single]) is None
    assert chartable([]) is None
