"""Whether a result table makes a chart, and which: `shape_of` gives a `Shape` or None.

A chart fits a succeeded, complete (not truncated) result of 2 to 60 rows with one column along the x axis and one or
two measures (columns of kind count, amount or number, every cell a number or NULL):

- a time series, drawn as a line, when the x column holds time: kind date or year, or text holding ISO dates
  (`2024-03-01`, `2024-03`), month names (`March`, `Mar`) or quarters (`2024-Q1`); the points are sorted by time;
- a breakdown, drawn as bars, when it holds a category: kind text, code or identifier (text preferred, then codes,
  then identifiers); the points are sorted by the first measure, highest first.

The x column's values must be present and distinct (one point each): a result with a second dimension (a row per
city and year) is not drawn, though a breakdown that also repeats one year on every row is. Any other shape (a
single number, one row, more than 60, no measure, three measures) gives None.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.answer.model import ChartType, ResultTable
from core.answer.values import MEASURES, ValueKind

MIN_POINTS = 2
MAX_POINTS = 60
MAX_MEASURES = 2

#: How the x axis is laid out: a time scale (ISO dates), years as numbers, months or quarters in their order, or
#: categories.
Axis = Literal["temporal", "year", "month", "quarter", "category"]
Number = int | float

_ISO_TIME = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?)?)?$")
_QUARTER = re.compile(r"^(\d{4})[- ]?Q([1-4])$", re.IGNORECASE)
_MONTHS = "january february march april may june july august september october november december".split()
#: Month name or its three-letter (or `sept`) abbreviation → its number.
MONTH_NUMBERS = (
    {name: i + 1 for i, name in enumerate(_MONTHS)} | {name[:3]: i + 1 for i, name in enumerate(_MONTHS)} | {"sept": 9}
)
_CATEGORY_ORDER = (ValueKind.TEXT, ValueKind.CODE, ValueKind.IDENTIFIER)


@dataclass(frozen=True)
class Measure:
    """A measure column drawn along y."""

    name: str
    kind: ValueKind


@dataclass(frozen=True)
class Point:
    """One x value (ISO text, a year, a month or quarter as written, a category) and its measures' values."""

    x: str | int
    values: tuple[Number | None, ...]


@dataclass(frozen=True)
class Shape:
    """What to draw: the chart type, the x column and its axis, the measures, and the points in drawing order."""

    type: ChartType
    x: str
    axis: Axis
    measures: tuple[Measure, ...]
    points: tuple[Point, ...]


def shape_of(table: ResultTable) -> Shape | None:
    """The chart `table` makes, or None when it makes none (see the module's rules)."""
    if not table.succeeded or table.truncated or not MIN_POINTS <= len(table.rows) <= MAX_POINTS:
        return None
    kinds = table.column_kinds()
    measures = [i for i, kind in enumerate(kinds) if kind in MEASURES and _numbers(_column(table, i)) is not None]
    if not 1 <= len(measures) <= MAX_MEASURES:
        return None
    others = [i for i in range(len(table.columns)) if i not in measures]
    found = _time_column(table, kinds, others) or _category_column(table, kinds, others)
    if found is None:
        return None
    x, axis = found
    points = _points(table, x, axis, measures)
    if sum(1 for p in points if any(v is not None for v in p.values)) < MIN_POINTS:
        return None
    return Shape(
        type="line" if axis != "category" else "bar",
        x=table.columns[x],
        axis=axis,
        measures=tuple(Measure(table.columns[i], kinds[i]) for i in measures),
        points=points,
    )


def chartable(results: Sequence[ResultTable]) -> ResultTable | None:
    """The last result among `results` that makes a chart (a turn's last query is usually the one it answered
    from), or None."""
    return next((table for table in reversed(results) if shape_of(table) is not None), None)


def time_axis(kind: ValueKind, values: Sequence[Any]) -> Axis | None:
    """How a column of this kind and these values lies along a time axis, or None when it does not hold time."""
    if not values or any(v is None or isinstance(v, bool) for v in values):
        return None
    if kind is ValueKind.YEAR:
        return "year" if all(_year(v) is not None for v in values) else None
    if kind not in (ValueKind.DATE, ValueKind.TEXT, ValueKind.CODE):
        return None
    if not all(isinstance(v, str) for v in values):
        return None
    texts = [str(v).strip() for v in values]
    if all(_ISO_TIME.match(t) for t in texts):
        return "temporal"
    if kind is ValueKind.DATE:
        return None
    if all(t.lower().rstrip(".") in MONTH_NUMBERS for t in texts):
        return "month"
    if all(_QUARTER.match(t) for t in texts):
        return "quarter"
    return None


def _column(table: ResultTable, index: int) -> list[Any]:
    return [row[index] if index < len(row) else None for row in table.rows]


def _numbers(values: Sequence[Any]) -> list[Number | None] | None:
    """The column's values as numbers (NULL kept), or None when one is not a finite number."""
    found: list[Number | None] = []
    for value in values:
        number = _number(value)
        if value is not None and number is None:
            return None
        found.append(number)
    return found


def _number(value: Any) -> Number | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?\d+", text):
            return int(text)
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _year(value: Any) -> int | None:
    number = _number(value)
    if number is None or not float(number).is_integer() or not 1000 <= number <= 9999:
        return None
    return int(number)


def _distinct(values: Sequence[Any]) -> bool:
    keys = [str(v).strip().lower() for v in values]
    return None not in values and len(set(keys)) == len(keys)


def _time_column(table: ResultTable, kinds: Sequence[ValueKind], candidates: Sequence[int]) -> tuple[int, Axis] | None:
    """The first column holding time, one point a value."""
    for index in candidates:
        values = _column(table, index)
        axis = time_axis(kinds[index], values)
        if axis is not None and _distinct(values):
            return index, axis
    return None


def _category_column(
    table: ResultTable, kinds: Sequence[ValueKind], candidates: Sequence[int]
) -> tuple[int, Axis] | None:
    for kind in _CATEGORY_ORDER:
        for index in candidates:
            values = _column(table, index)
            if kinds[index] is kind and not any(isinstance(v, bool) for v in values) and _distinct(values):
                return index, "category"
    return None


def _points(table: ResultTable, x: int, axis: Axis, measures: Sequence[int]) -> tuple[Point, ...]:
    columns = [_numbers(_column(table, i)) or [] for i in measures]
    xs = _column(table, x)
    points = [Point(_x_value(value, axis), tuple(c[row] for c in columns)) for row, value in enumerate(xs)]
    if axis == "category":
        return tuple(sorted(points, key=_by_first_measure))
    return tuple(sorted(points, key=lambda p: _time_key(p.x, axis)))


def _x_value(value: Any, axis: Axis) -> str | int:
    year = _year(value) if axis == "year" else None
    return year if year is not None else str(value).strip()


def _by_first_measure(point: Point) -> tuple[bool, float, str]:
    first = point.values[0]
    return first is None, -(first or 0), str(point.x).lower()


def _time_key(x: str | int, axis: Axis) -> tuple[int, int, str]:
    if axis == "month":
        return MONTH_NUMBERS[str(x).lower().rstrip(".")], 0, ""
    if axis == "quarter":
        found = _QUARTER.match(str(x))
        assert found is not None
        return int(found.group(1)), int(found.group(2)), ""
    if isinstance(x, int):
        return x, 0, ""
    return 0, 0, str(x).replace("T", " ")
