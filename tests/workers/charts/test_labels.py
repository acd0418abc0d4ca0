"""What a person reads about a chart: axis titles in words with their unit, and alt text naming the highest point."""

from __future__ import annotations

import pytest

from core.answer.values import ValueKind
from tests.workers.charts.tables import cities, months_2024, table
from workers.charts.labels import alt_text, axis_title, humanise
from workers.charts.shape import shape_of


@pytest.mark.parametrize(
    ("column", "words"),
    [
        ("total_amt", "Total amount"),
        ("orderCount", "Order count"),
        ("ORD_QTY", "Order quantity"),
        ("sum(amount)", "Total amount"),
        ("COUNT(*)", "Count"),
        ("avg(o.unit_price)", "Average unit price"),
        ("SUM(TOT_AMT)", "Total amount"),
        ("count(distinct customer_id)", "Count of distinct customer id"),
        ("city", "City"),
    ],
)
def test_a_column_name_reads_as_words(column: str, words: str) -> None:
    assert humanise(column) == words


@pytest.mark.parametrize(
    ("column", "kind", "title"),
    [
        ("revenue_usd", ValueKind.AMOUNT, "Revenue (USD)"),
        ("total_amount", ValueKind.AMOUNT, "Total amount"),
        ("margin", ValueKind.AMOUNT, "Margin (amount)"),
        ("orders", ValueKind.COUNT, "Orders (count)"),
        ("order_count", ValueKind.COUNT, "Order count"),
        ("avg_discount", ValueKind.NUMBER, "Average discount"),
    ],
)
def test_an_axis_title_says_the_unit_when_known(column: str, kind: ValueKind, title: str) -> None:
    assert axis_title(column, kind) == title


def test_the_alt_text_of_a_series_says_its_span_and_its_highest_month() -> None:
    shape = shape_of(months_2024())
    assert shape is not None
    assert alt_text(shape) == (
        "Line chart of Orders (count) by Month: 12 points from January 2024 to December 2024; "
        "the highest is 61 in June 2024."
    )


def test_the_alt_text_of_a_breakdown_names_the_highest_bar() -> None:
    shape = shape_of(cities())
    assert shape is not None
    assert alt_text(shape) == (
        "Bar chart of Total amount by City: 8 bars, highest first; the highest is 12,345.50 for Seoul."
    )


def test_the_alt_text_of_two_measures_names_each_highest() -> None:
    rows = [[2022, 7, 900.0], [2023, 9, 1200.0], [2024, 8, 1100.0]]
    kinds = [ValueKind.YEAR, ValueKind.COUNT, ValueKind.AMOUNT]
    shape = shape_of(table(["year", "orders", "revenue_eur"], rows, kinds))
    assert shape is not None
    assert alt_text(shape) == (
        "Line chart of Orders (count) and Revenue (EUR) by Year: 3 points from 2022 to 2024; "
        "the highest Orders (count) is 9 in 2023, the highest Revenue (EUR) is 1,200.00 in 2023."
    )


def test_the_alt_text_of_days_says_on() -> None:
    shape = shape_of(table(["order_date", "orders"], [["2024-03-01", 4], ["2024-03-02", 9], ["2024-03-03", 2]]))
    assert shape is not None
    assert alt_text(shape).endswith("the highest is 9 on 2024-03-02.")
