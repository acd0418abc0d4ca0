"""SQL results as chat shows them: how much of a result fits in the message's table, and the CSV file that carries a
result too large for it. Pure: no SDK, no I/O.

Slack shows one result per message as a native Block Kit `table` (Slack allows one table block per message, 100 rows
including the header, 20 columns): the answer's latest successful result with rows (`native_table_run`). That result
is shown whole when it has at most `NATIVE_ROWS` rows and `NATIVE_COLUMNS` columns and its cells fit
`NATIVE_CHARS`; every other result is drawn as a small monospace table of `TABLE_ROWS` rows and `TABLE_COLUMNS`
columns. A result gets a CSV file when its table cannot show all of it, or when the executor stopped reading early
(`truncated`). Failed SQL gets no file.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from typing import Any

TABLE_ROWS = 10  # rows the message's result table shows
TABLE_COLUMNS = 6  # columns the message's result table shows
NATIVE_ROWS = 99  # data rows of the native table (Slack: at most 100 rows, the header included)
NATIVE_COLUMNS = 20  # columns of the native table (Slack's limit)
NATIVE_CELL = 200  # characters of one native table cell before it is cut
NATIVE_CHARS = 12000  # characters of all native table cells together, so the message stays small


@dataclass(frozen=True)
class ResultFile:
    """A CSV export of one SQL result, ready to upload next to the answer."""

    filename: str
    title: str
    content: bytes


def succeeded(run: dict[str, Any]) -> bool:
    return not run.get("error")


def native_table_run(runs: list[Any]) -> int | None:
    """The index of the result that gets the message's one native table: the latest successful one with rows."""
    for i in reversed(range(len(runs))):
        run = runs[i]
        if isinstance(run, dict) and succeeded(run) and run.get("rows") and run.get("columns"):
            return i
    return None


def native_rows_shown(run: dict[str, Any]) -> int:
    """How many of the result's rows the native table shows: up to `NATIVE_ROWS`, within `NATIVE_CHARS`."""
    width = min(len(run.get("columns") or []), NATIVE_COLUMNS)
    budget = NATIVE_CHARS - sum(min(len(str(c)), NATIVE_CELL) for c in (run.get("columns") or [])[:width])
    shown = 0
    for row in (run.get("rows") or [])[:NATIVE_ROWS]:
        budget -= sum(min(len(cell_text(v)) + 4, NATIVE_CELL) for v in list(row)[:width])
        if budget < 0:
            break
        shown += 1
    return max(shown, 1)


def needs_file(run: dict[str, Any], *, native: bool = False) -> bool:
    """Whether the message's table shows less than this result holds (`native`: the result has the native table)."""
    if not succeeded(run):
        return False
    rows = run.get("rows") or []
    columns = run.get("columns") or []
    if run.get("truncated"):
        return True
    if native:
        return len(rows) > native_rows_shown(run) or len(columns) > NATIVE_COLUMNS
    return len(rows) > TABLE_ROWS or len(columns) > TABLE_COLUMNS


def cell_text(value: Any) -> str:
    """A result cell as text: NULL becomes an empty cell, booleans and numbers their usual spelling."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_PLAIN_NUMBER_COLUMN = re.compile(r"(^|_)(id|no|num|cd|code|year|yr|yyyy|zip|phone|tel)$|^(id|year)|year$", re.I)


def number_text(value: int | float, column: str = "") -> str:
    """A number as a reader expects it: thousands separators (`12,345`, `1,234.5`), except in columns that hold
    identifiers, codes or years (`ORDER_ID`, `year`), where `2024` stays `2024`."""
    if _PLAIN_NUMBER_COLUMN.search(column.strip()) or (isinstance(value, float) and not math.isfinite(value)):
        return cell_text(value)
    text = f"{value:,}"
    return text if "e" not in text else cell_text(value)


def result_csv(run: dict[str, Any]) -> bytes:
    """The result's columns and every fetched row as UTF-8 CSV (with a byte order mark, so spreadsheets read it)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([str(c) for c in run.get("columns") or []])
    for row in run.get("rows") or []:
        writer.writerow([cell_text(v) for v in row])
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")


def result_files(payload: dict[str, Any]) -> list[ResultFile]:
    """One CSV per SQL result of the answer that the message's table cannot show whole, in the answer's order."""
    files: list[ResultFile] = []
    runs = [r for r in payload.get("sql") or [] if isinstance(r, dict)]
    native = native_table_run(runs)
    for number, run in enumerate(runs, start=1):
        if not needs_file(run, native=number - 1 == native):
            continue
        database = str(run.get("database") or "result")
        rows = len(run.get("rows") or [])
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", database).strip("-") or "result"
        title = f"Result of SQL {number} on {database}: {rows} row{'s' if rows != 1 else ''}"
        if run.get("truncated"):
            title += " (more rows exist; only these were fetched)"
        files.append(ResultFile(filename=f"{slug}-result-{number}.csv", title=title, content=result_csv(run)))
    return files
