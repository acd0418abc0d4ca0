"""How a result cell reads, the same on every surface (Slack, Teams, the console, the guided path's answer text).

What a column holds decides, not the value alone: identifiers, codes and years are never grouped with separators
(the order 10234 stays `10234`, the year 2024 stays `2024`); counts, amounts and other measures are (`4,750`);
amounts show two decimals and other floats are rounded for display only (the stored row keeps every digit); NULL
reads as an em dash, booleans as `yes`/`no`, dates in ISO form and times without a `T`.

The turn engine derives a result column's kind from the card of the column it reads (`workers.sql.result_kinds`);
where it could not (an answer stored before kinds existed, an expression no card describes) `infer_kind` guesses
from the column's name and its values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Any


class ValueKind(StrEnum):
    IDENTIFIER = "identifier"  # keys and other ids: never grouped
    CODE = "code"  # coded values: never grouped
    YEAR = "year"  # never grouped
    COUNT = "count"  # whole numbers, grouped
    AMOUNT = "amount"  # fixed-point measures (DECIMAL(p, 2)): grouped, two decimals
    NUMBER = "number"  # other measures: grouped, floats rounded
    DATE = "date"
    BOOLEAN = "boolean"
    TEXT = "text"


NULL_TEXT = "\u2014"  # an em dash
#: Grouping would misread these: numbers that name rather than measure.
UNGROUPED = frozenset({ValueKind.IDENTIFIER, ValueKind.CODE, ValueKind.YEAR})
MEASURES = frozenset({ValueKind.COUNT, ValueKind.AMOUNT, ValueKind.NUMBER})

#: Column names that say a number names something (an id, a code, a number, a postcode, a phone) or is a year.
_NAMING = re.compile(r"(^|_)(id|no|nbr|num|cd|code|key|zip|postcode|phone|tel|fax)s?$|^(id|no)_", re.IGNORECASE)
_CAMEL_ID = re.compile(r"(?<=[a-z])(Id|ID|No|Code|Key)$")  # orderId, CustomerID, partNo
_YEAR = re.compile(r"(^|_)(year|yr|yyyy)s?$|^(year|yr)(_|$)|year$", re.IGNORECASE)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?)?$")


def kind_from_name(column: str) -> ValueKind | None:
    """What a column's name alone says: a year, an identifier or code, or nothing."""
    name = column.strip().strip('"`[]')
    if _YEAR.search(name):
        return ValueKind.YEAR
    if _NAMING.search(name) or _CAMEL_ID.search(name):
        return ValueKind.IDENTIFIER
    return None


def infer_kind(column: str, values: Sequence[Any]) -> ValueKind:
    """A column's kind guessed from its name and its values, where no card said it."""
    named = kind_from_name(column)
    present = [v for v in values if v is not None]
    if named is not None and all(_is_number(v) or isinstance(v, str) for v in present):
        return named
    if present and all(isinstance(v, bool) for v in present):
        return ValueKind.BOOLEAN
    if present and all(_is_number(v) for v in present):
        return ValueKind.COUNT if all(isinstance(v, int) for v in present) else ValueKind.NUMBER
    if present and all(isinstance(v, str) and _ISO_DATE.match(v) for v in present):
        return ValueKind.DATE
    return ValueKind.TEXT


def format_value(value: Any, kind: ValueKind, *, null: str = NULL_TEXT) -> str:
    """`value` (a JSON result cell) as text for a person, as its column's `kind` says."""
    if value is None:
        return null
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind in MEASURES:
        number = _as_number(value)
        if number is not None:
            return _measure(number, kind)
    if kind in UNGROUPED:
        number = _as_number(value)
        if isinstance(number, float) and number.is_integer():
            return str(int(number))
        return str(value)
    if kind is ValueKind.DATE and isinstance(value, str) and _ISO_DATE.match(value):
        return _iso_date(value)
    if _is_number(value):  # a number in a column said to hold text: never invent separators, but round
        return _measure(value, ValueKind.NUMBER) if isinstance(value, float) else str(value)
    return str(value)


def is_numeric(kind: ValueKind) -> bool:
    """Whether a column of this kind lines up to the right (measures, and numbers that name)."""
    return kind in MEASURES or kind in (ValueKind.IDENTIFIER, ValueKind.YEAR)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _as_number(value: Any) -> int | float | None:
    if _is_number(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, str):
        try:
            return int(value) if re.fullmatch(r"-?\d+", value.strip()) else float(value)
        except ValueError:
            return None
    return None


def _measure(number: int | float, kind: ValueKind) -> str:
    if isinstance(number, int):
        return f"{number:,}.00" if kind is ValueKind.AMOUNT else f"{number:,}"
    if not math.isfinite(number):
        return str(number)
    if kind is ValueKind.AMOUNT:
        return f"{number:,.2f}"
    if number.is_integer() and abs(number) < 1e15:
        return f"{int(number):,}"
    if abs(number) >= 1:
        return f"{number:,.2f}".rstrip("0").rstrip(".")
    return f"{number:.4g}"  # small ratios keep four significant digits: 0.03125 → 0.03125, 0.000123456 → 0.0001235


def _iso_date(value: str) -> str:
    date, _, time = value.replace("T", " ", 1).partition(" ")
    if not time:
        return date
    time = time.split(".")[0]  # fractions of a second say nothing to a reader
    if time.endswith(":00") and time.count(":") == 2 and not re.search(r"[+-]\d|Z", time):
        time = time[:-3] if time != "00:00:00" else ""
    return f"{date} {time}".strip()


def column_header(column: str) -> str:
    """A result column as a reader names it: an SQL alias as written, an unnamed aggregate in words
    (`COUNT(*)` → "count", `SUM(TOT_AMT)` → "total TOT_AMT")."""
    match = re.fullmatch(r"\s*(count|sum|avg|min|max)\s*\(\s*(distinct\s+)?([^()]*?)\s*\)\s*", column, re.IGNORECASE)
    if match is None:
        return column
    what = match.group(3).split(".")[-1].strip('"`[]') or "rows"
    word = {"count": "count", "sum": "total", "avg": "average", "min": "lowest", "max": "highest"}
    name = word[match.group(1).lower()]
    if name == "count":
        return "count" if what == "*" else f"count of {'distinct ' if match.group(2) else ''}{what}"
    return f"{name} {what}"
