"""Preparing the values of a containment check so that a lookup compares like with like.

Containment checks look values of one column up in another, whose type may differ (codes kept as VARCHAR in one table
and INTEGER in the other). A strict engine (PostgreSQL) rejects `int_col IN ('A1')` outright, so values are converted
to the column's family first; a value that cannot be converted cannot occur in the column and is dropped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from catalog.connectors.base import TypeFamily

_INTEGER = re.compile(r"[+-]?\d+")


def _as_integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, (float, Decimal)):
        try:
            whole = int(value)
        except (ValueError, OverflowError):  # NaN, infinity
            return None
        return whole if value == whole else None
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    return None


def _as_decimal(value: Any) -> Any:
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def _as_text(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    return None


def prepare(values: Iterable[Any], family: TypeFamily) -> list[Any]:
    """The distinct, non-null values converted for a column of `family`, in first-seen order.

    Values of families without a safe conversion are passed as they are; unhashable ones (JSON documents, arrays)
    are dropped because they cannot be a key.
    """
    convert = {"integer": _as_integer, "decimal": _as_decimal, "float": _as_decimal, "text": _as_text}.get(family)
    seen: dict[Any, None] = {}
    for value in values:
        if value is None:
            continue
        converted = convert(value) if convert else value
        if converted is None:
            continue
        try:
            seen.setdefault(converted, None)
        except TypeError:
            continue
    return list(seen)
