"""What a person reads about a chart: axis titles from column names (`axis_title`: `total_amt` reads `Total amount`,
with the unit where the column says one: a currency code, or `(count)` / `(amount)` when the name does not) and
the alt text (`alt_text`: what is plotted, the number of points, and the highest value and where).

Values in the alt text read as they do everywhere else (`core.answer.values.format_value`); a monthly series's
points (ISO dates on the first of a month) read as `March 2024`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.values import ValueKind, column_header, format_value
from workers.charts.shape import Measure, Point, Shape

#: Abbreviations common in column names, spelled out.
_WORDS = {
    "amt": "amount",
    "qty": "quantity",
    "cnt": "count",
    "avg": "average",
    "num": "number",
    "nbr": "number",
    "no": "number",
    "pct": "percent",
    "dt": "date",
    "yr": "year",
    "mth": "month",
    "mon": "month",
    "cust": "customer",
    "ord": "order",
    "prod": "product",
    "tot": "total",
    "rev": "revenue",
}
_CURRENCIES = frozenset("usd eur gbp jpy krw cny inr chf cad aud sek nok dkk sgd hkd brl mxn".split())
_SAYS_AMOUNT = frozenset("amount revenue sales price cost total value spend paid balance income".split())
_SAYS_COUNT = frozenset("count number total".split())
_MONTH_NAMES = "January February March April May June July August September October November December".split()
_FIRST_OF_MONTH = re.compile(r"^(\d{4})-(\d{2})(-01([T ]00:00(:00(\.0+)?)?)?)?$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def humanise(column: str) -> str:
    """A column's name as words, as the result table's header names it (`core.answer.values.column_header`) and
    then spelled out: `total_amt` → `Total amount`, `orderCount` → `Order count`, `SUM(TOT_AMT)` → `Total amount`,
    `count(*)` → `Count`."""
    words = _words(column_header(column.strip().strip('"`[]'))).split()
    deduplicated = [w for i, w in enumerate(words) if i == 0 or w != words[i - 1]]
    return _sentence_case(" ".join(deduplicated)) or column


def axis_title(column: str, kind: ValueKind) -> str:
    """The title of the axis that shows `column`: its name as words, with the unit when known."""
    title = humanise(column)
    tokens = set(re.split(r"[\s_()]+", title.lower()))
    currency = next((t for t in re.split(r"[^a-z]+", column.lower()) if t in _CURRENCIES), None)
    if kind is ValueKind.AMOUNT and currency:
        stripped = re.sub(rf"\b{currency}\b", "", title, flags=re.IGNORECASE)
        return f"{_sentence_case(' '.join(stripped.split()))} ({currency.upper()})"
    if kind is ValueKind.AMOUNT and not tokens & _SAYS_AMOUNT:
        return f"{title} (amount)"
    if kind is ValueKind.COUNT and not tokens & _SAYS_COUNT:
        return f"{title} (count)"
    return title


def monthly(shape: Shape) -> bool:
    """Whether `shape` is a series of months: every point an ISO date on the first of a month (or `2024-03`)."""
    return shape.axis == "temporal" and all(_FIRST_OF_MONTH.match(str(p.x)) for p in shape.points)


def daily(shape: Shape) -> bool:
    """Whether `shape` is a series of days (ISO dates without a time)."""
    return shape.axis == "temporal" and all(_DAY.match(str(p.x)) for p in shape.points)


def point_label(x: str | int, shape: Shape) -> str:
    """A point's x value as a reader reads it."""
    if isinstance(x, str) and monthly(shape):
        found = _FIRST_OF_MONTH.match(x)
        assert found is not None
        return f"{_MONTH_NAMES[int(found.group(2)) - 1]} {found.group(1)}"
    if shape.axis == "temporal":
        return format_value(x, ValueKind.DATE)
    return str(x)


def alt_text(shape: Shape) -> str:
    """One or two sentences saying what the chart shows: its type, what is plotted against what, the number of
    points (and the span of a series), and each measure's highest value and where it is."""
    measures = " and ".join(axis_title(m.name, m.kind) for m in shape.measures)
    x = humanise(shape.x)
    count = len(shape.points)
    if shape.type == "line":
        first, last = point_label(shape.points[0].x, shape), point_label(shape.points[-1].x, shape)
        head = f"Line chart of {measures} by {x}: {count} points from {first} to {last}"
    else:
        head = f"Bar chart of {measures} by {x}: {count} bars, highest first"
    where = "for" if shape.type == "bar" else "on" if daily(shape) and not monthly(shape) else "in"
    peaks = [_peak(shape, i, m, where, named=len(shape.measures) > 1) for i, m in enumerate(shape.measures)]
    return f"{head}; " + ", ".join(p for p in peaks if p) + "."


def _peak(shape: Shape, index: int, measure: Measure, where: str, *, named: bool) -> str:
    present = [p for p in shape.points if p.values[index] is not None]
    if not present:
        return ""
    top = _highest(present, index)
    what = f"the highest {axis_title(measure.name, measure.kind)}" if named else "the highest"
    value = format_value(top.values[index], measure.kind)
    return f"{what} is {value} {where} {point_label(top.x, shape)}"


def _highest(points: Sequence[Point], index: int) -> Point:
    """The first point holding the largest value (in drawing order, so a tie names the earliest)."""
    best = points[0]
    for point in points[1:]:
        if (point.values[index] or 0) > (best.values[index] or 0):
            best = point
    return best


def _words(name: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    parts = [p for p in re.split(r"[\s_\-.]+", spaced) if p]
    return " ".join(_WORDS.get(p.lower(), p.lower()) for p in parts)


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]
