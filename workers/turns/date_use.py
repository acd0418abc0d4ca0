"""The **date** checks of `workers.turns.answer_checks`: one day compared where the question names a period, and a
date function applied to a column that holds no dates.

A date column compared with one day (`ORD_DT = '2023-12-01'`) when the question names no day ("the December 2023
snapshot") counts one day of the period the question means.

Periods are often kept as text or numbers rather than dates: a month as `202401`, a day as `20240115`. A small
model groups such a column with `strftime('%Y-%m', SALES_YM)`, the engine reads `202401` as a Julian day, and the
statement runs and returns a month of year -4158. The statement is in doubt when a date function (strftime, date,
datetime, julianday, DATE_FORMAT, YEAR, MONTH, EXTRACT, TO_CHAR, DATE_TRUNC) takes a column whose card gives it
no date or time type and whose values (from the card, or a few read through the permission-checked probe) are
none of them dates or times written as dates are. The repair is told what the column holds and to use it as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from sqlglot import exp

#: A literal that starts with a day: 2024-01-15.
DAY_LITERAL = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
#: A day named in a question: a date, "the 5th", "5일", "March 5", "5 March", "today", "yesterday".
_DAY_IN_TEXT = re.compile(
    r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b|\b\d{1,2}(st|nd|rd|th)\b|\d+\s*일|"
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}\s+(jan|feb|mar|apr|may|jun|"
    r"jul|aug|sep|oct|nov|dec)|\b(today|yesterday)\b",
    re.IGNORECASE,
)
#: Date functions sqlglot parses into their own nodes, on every dialect.
_DATE_NODES = (
    exp.TimeToStr,
    exp.TsOrDsToTimestamp,
    exp.TsOrDsToDate,
    exp.Date,
    exp.Datetime,
    exp.Year,
    exp.Month,
    exp.Day,
    exp.Extract,
    exp.DateTrunc,
    exp.TimestampTrunc,
)
#: Date functions some dialects leave as plain calls.
_DATE_CALLS = frozenset({"STRFTIME", "DATE", "DATETIME", "JULIANDAY", "DATE_FORMAT", "TO_CHAR", "DATE_TRUNC"})
_DATE_TYPE = re.compile(r"date|time", re.IGNORECASE)
#: A value written as a date or a date and time is: 2024-01-15, 2024/01/15, 2024.01.15, 2024-01-15 10:30.
_DATE_VALUE = re.compile(r"^\s*\d{4}[-/.]\d{1,2}([-/.]\d{1,2})?([ T]\d{1,2}:\d{2}.*)?\s*$")
#: A modifier that makes a number a date: strftime('%Y', x, 'unixepoch').
_EPOCH = re.compile(r"unixepoch|auto", re.IGNORECASE)

#: (the column as written) → (the table it belongs to, its card entry), or None when unknown.
Resolve = Callable[[exp.Column], tuple[str, dict[str, Any]] | None]
#: (table, column) → some of the values the column holds, or None when unknown.
Sample = Callable[[str, str], list[str] | None]


class Compared(Protocol):
    """A comparison of a column with literals (`workers.turns.answer_checks.Filter`)."""

    @property
    def column(self) -> str: ...
    @property
    def op(self) -> str: ...
    @property
    def literals(self) -> tuple[str, ...]: ...


def day_problems(question: str, found: Sequence[Compared]) -> list[tuple[str, str]]:
    """(what to tell the user, what to tell the repair call) for a date compared with one day, though the question
    names no day."""
    if _DAY_IN_TEXT.search(question):
        return []
    problems = []
    for f in found:
        days = [lit for lit in f.literals if f.op == "eq" and DAY_LITERAL.match(lit) and lit not in question]
        for literal in days[:1]:
            problems.append(
                (
                    f"I counted only {f.column} = '{literal}', one day, though the question names no day.",
                    f"The question names no single day: do not compare {f.column} with '{literal}'; compare it with "
                    "the start and end of the period the question names (>= and <), or leave the filter out when "
                    "the table itself holds just that period.",
                )
            )
    return problems


def undated_problems(tree: exp.Expr, resolve: Resolve, sample: Sample) -> list[tuple[str, str]]:
    """(what to tell the user, what to tell the repair call) for each column a date function takes that holds no
    dates."""
    return [
        (
            f"{column} of {table} holds values like '{values[0]}', not dates, so the periods may be wrong.",
            f"{table}.{column} holds values like {', '.join(repr(v) for v in values)}, not dates: use no date "
            "function on it; group or filter on it as it is (or on part of it with substr).",
        )
        for table, column, values in undated_columns(tree, resolve, sample)
    ]


def undated_columns(tree: exp.Expr, resolve: Resolve, sample: Sample) -> list[tuple[str, str, list[str]]]:
    """(table, column, some of its values) for each column a date function takes that holds no dates."""
    found: list[tuple[str, str, list[str]]] = []
    for node in tree.find_all(exp.Func):
        if not _is_date_call(node):
            continue
        for column in _arguments(node):
            resolved = resolve(column)
            if resolved is None:
                continue
            table, entry = resolved
            name = str(entry.get("name") or column.name)
            if any(t == table and c == name for t, c, _ in found) or _DATE_TYPE.search(str(entry.get("type") or "")):
                continue
            values = [str(v) for v in entry.get("values") or [] if v is not None] or sample(table, name) or []
            values = [v for v in values if v.strip()]
            if values and not any(_DATE_VALUE.match(v) for v in values):
                found.append((table, name, values[:3]))
    return found


def _is_date_call(node: exp.Expr) -> bool:
    if isinstance(node, _DATE_NODES):
        return not any(isinstance(a, exp.Literal) and _EPOCH.search(a.name) for a in node.iter_expressions())
    if isinstance(node, exp.Anonymous) and str(node.name).upper() in _DATE_CALLS:
        return not any(isinstance(a, exp.Literal) and _EPOCH.search(a.name) for a in node.expressions)
    return False


def _arguments(node: exp.Expr) -> list[exp.Column]:
    """The columns the call takes directly, or through another date function or a cast (not in a subquery)."""
    columns = []
    for child in node.iter_expressions():
        while isinstance(child, exp.Cast | exp.TsOrDsToTimestamp | exp.TsOrDsToDate):
            child = child.this
        if isinstance(child, exp.Column):
            columns.append(child)
    return columns
