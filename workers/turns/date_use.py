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

When every value read is a period written as digits (`2024`, `202401`, `20240115`), the year, month and day are
parts of the text, and a call that only asks for them (`strftime('%Y-%m', x)`, `YEAR(x)`, `EXTRACT(MONTH FROM x)`)
is rewritten to those parts (`redated`): `substr(x, 1, 4) || '-' || substr(x, 5, 2)`, with no model call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
#: A period written as digits: a year, a year and month, a day (`2024`, `202401`, `20240115`).
_DIGIT_PERIOD = re.compile(r"^(\d{4})(0[1-9]|1[0-2])?(0[1-9]|[12]\d|3[01])?$")
#: Where each part of a period written as digits starts (1-based, as substr counts) and how long it is; the number
#: of digits a value needs to hold it.
_PARTS = {"Y": (1, 4, 4), "m": (5, 2, 6), "d": (7, 2, 8)}
_EXTRACTED = {"YEAR": "Y", "MONTH": "m", "DAY": "d"}
_TEXT_TYPE = re.compile(r"char|text|string|clob", re.IGNORECASE)

#: (the column as written) → (the table it belongs to, its card entry), or None when unknown.
Resolve = Callable[[exp.Column], tuple[str, dict[str, Any]] | None]
#: (table, column) → some of the values the column holds, or None when unknown.
Sample = Callable[[str, str], list[str] | None]


class Compared(Protocol):
    """A comparison of a column with literals (`workers.turns.statement_filters.Filter`)."""

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


def holds_dates(entry: dict[str, Any]) -> bool:
    """Does the card's column `entry` hold dates: a date or time type, or values all written as dates are?"""
    if _DATE_TYPE.search(str(entry.get("type") or "")):
        return True
    values = [str(v) for v in entry.get("values") or [] if v is not None and str(v).strip()]
    return bool(values) and all(_DATE_VALUE.match(v) for v in values)


def holds_periods(entry: dict[str, Any]) -> bool:
    """Does the card's column `entry` hold periods written as digits of one length (`2024`, `202401`)?"""
    return _periods([str(v).strip() for v in entry.get("values") or [] if v is not None and str(v).strip()])


def _periods(values: Sequence[str]) -> bool:
    """Are `values` (stripped, none empty) all periods written as digits, of one length?"""
    return bool(values) and len({len(v) for v in values}) == 1 and all(_DIGIT_PERIOD.match(v) for v in values)


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


def date_arguments(tree: exp.Expr) -> list[exp.Column]:
    """Every column a date function of `tree` takes (`_arguments`)."""
    return [column for node in tree.find_all(exp.Func) if _is_date_call(node) for column in _arguments(node)]


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


@dataclass(frozen=True)
class Redated:
    """A statement whose date functions on periods written as digits were rewritten (`sql`), and what the answer
    says about it (`note`)."""

    sql: str
    note: str


def redated(tree: exp.Expr, resolve: Resolve, sample: Sample, dialect: str | None) -> Redated | None:
    """`tree` (changed in place) with each date function that takes a period written as digits (`202401`)
    rewritten to the parts of its text it asks for; None when there is none, or when a call asks for more than the
    digits hold (a week, an hour) or a column holds periods of different lengths."""
    found: dict[int, tuple[exp.Expr, exp.Expr]] = {}
    read: dict[str, str] = {}  # column -> a value, for the note
    for node in tree.find_all(exp.Func):
        if not _is_date_call(node) or (isinstance(node.parent, exp.Func) and _is_date_call(node.parent)):
            continue  # a conversion inside another date call is rewritten with it
        columns = _arguments(node)
        if len(columns) != 1 or (held := _digits(columns[0], resolve, sample)) is None:
            continue
        digits, read[columns[0].name] = len(held), held
        parts = _parts_asked(node)
        if parts is None or any(_PARTS[p][2] > digits for p in parts if p in _PARTS):
            return None
        replacement = _from_parts(columns[0], parts, _is_text(columns[0], resolve))
        if not isinstance(node, exp.TimeToStr):  # YEAR(x), EXTRACT(MONTH FROM x): a number, as the call gave
            replacement = exp.cast(replacement, "INT")
        found[id(node)] = (node, replacement)
    if not found:
        return None
    for call, replacement in found.values():
        call.replace(replacement)
    said = ", ".join(f"{column} ('{value}')" for column, value in read.items())
    return Redated(tree.sql(dialect=dialect), f"I read {said} as periods written as digits, not as dates.")


def _digits(column: exp.Column, resolve: Resolve, sample: Sample) -> str | None:
    """A value of the column, when every value read is a period written as digits of one length."""
    resolved = resolve(column)
    if resolved is None:
        return None
    table, entry = resolved
    if _DATE_TYPE.search(str(entry.get("type") or "")):
        return None
    name = str(entry.get("name") or column.name)
    values = [str(v).strip() for v in entry.get("values") or [] if v is not None] or sample(table, name) or []
    values = [v.strip() for v in values if v.strip()]
    return values[0] if _periods(values) else None


def _parts_asked(node: exp.Expr) -> list[str] | None:
    """The format's parts in order: "Y", "m", "d", or text between them; None for anything else it asks."""
    if isinstance(node, exp.Year | exp.Month | exp.Day):
        return [{"Year": "Y", "Month": "m", "Day": "d"}[type(node).__name__]]
    if isinstance(node, exp.Extract):
        part = _EXTRACTED.get(node.this.name.upper())
        return [part] if part else None
    if not isinstance(node, exp.TimeToStr) or not isinstance(node.args.get("format"), exp.Literal):
        return None
    parts: list[str] = []
    for piece in re.split(r"(%.)", node.args["format"].name):
        if piece.startswith("%"):
            if piece[1:] not in _PARTS:
                return None
            parts.append(piece[1:])
        elif piece:
            parts.append(piece)
    return parts


def _from_parts(column: exp.Column, parts: list[str], text: bool) -> exp.Expr:
    source: exp.Expr = column.copy() if text else exp.cast(column.copy(), "TEXT")
    pieces: list[exp.Expr] = []
    for part in parts:
        if part in _PARTS:
            start, length, _ = _PARTS[part]
            pieces.append(
                exp.Substring(this=source.copy(), start=exp.Literal.number(start), length=exp.Literal.number(length))
            )
        else:
            pieces.append(exp.Literal.string(part))
    result = pieces[0]
    for piece in pieces[1:]:
        result = exp.DPipe(this=result, expression=piece, safe=True)
    return result


def _is_text(column: exp.Column, resolve: Resolve) -> bool:
    resolved = resolve(column)
    return resolved is not None and bool(_TEXT_TYPE.search(str(resolved[1].get("type") or "")))
