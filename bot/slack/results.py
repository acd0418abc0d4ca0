"""SQL results as chat shows them: how much of a result fits in the message's table, and the CSV file that carries a
result too large for it. Pure: no SDK, no I/O.

Slack shows one result per message as a native Block Kit `table` (Slack allows one table block per message, 100 rows
including the header, 20 columns): the answer's latest successful result with rows (`native_table_run`). That result
is shown whole when it has at most `NATIVE_ROWS` rows and `NATIVE_COLUMNS` columns and its cells fit
`NATIVE_CHARS`; every other result is drawn as a small monospace table of `TABLE_ROWS` rows and `TABLE_COLUMNS`
columns. A result gets a CSV file when its table cannot show all of it, or when the executor stopped reading early
(`truncated`). Failed SQL gets no file. Cells read as on every surface (`core.answer.values`); the CSV keeps the
values themselves.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.answer.model import Answer, ResultTable

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


def native_table_run(runs: Sequence[ResultTable]) -> int | None:
    """The index of the result that gets the message's one native table: the latest successful one with rows."""
    for i in reversed(range(len(runs))):
        run = runs[i]
        if run.succeeded and run.rows and run.columns:
            return i
    return None


def native_rows_shown(run: ResultTable) -> int:
    """How many of the result's rows the native table shows: up to `NATIVE_ROWS`, within `NATIVE_CHARS`."""
    width = min(len(run.columns), NATIVE_COLUMNS)
    budget = NATIVE_CHARS - sum(min(len(str(c)), NATIVE_CELL) for c in run.columns[:width])
    shown = 0
    for row in run.cells()[:NATIVE_ROWS]:
        budget -= sum(min(len(v) + 4, NATIVE_CELL) for v in row[:width])
        if budget < 0:
            break
        shown += 1
    return max(shown, 1)


def needs_file(run: ResultTable, *, native: bool = False) -> bool:
    """Whether the message's table shows less than this result holds (`native`: the result has the native table)."""
    if not run.succeeded:
        return False
    if run.truncated:
        return True
    if native:
        return len(run.rows) > native_rows_shown(run) or len(run.columns) > NATIVE_COLUMNS
    return len(run.rows) > TABLE_ROWS or len(run.columns) > TABLE_COLUMNS


def csv_cell(value: Any) -> str:
    """A result cell in the CSV export: the value itself, for a spreadsheet to format (NULL is an empty cell)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def result_csv(run: ResultTable) -> bytes:
    """The result's columns and every fetched row as UTF-8 CSV (with a byte order mark, so spreadsheets read it)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([str(c) for c in run.columns])
    for row in run.rows:
        writer.writerow([csv_cell(v) for v in row])
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")


def result_files(answer: Answer) -> list[ResultFile]:
    """One CSV per SQL result of the answer that the message's table cannot show whole, in the answer's order."""
    files: list[ResultFile] = []
    runs = answer.results
    native = native_table_run(runs)
    for number, run in enumerate(runs, start=1):
        if not needs_file(run, native=number - 1 == native):
            continue
        database = run.database or "result"
        rows = len(run.rows)
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", database).strip("-") or "result"
        title = f"Result of SQL {number} on {database}: {rows} row{'s' if rows != 1 else ''}"
        if run.truncated:
            title += " (more rows exist; only these were fetched)"
        files.append(ResultFile(filename=f"{slug}-result-{number}.csv", title=title, content=result_csv(run)))
    return files
