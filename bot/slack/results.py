"""SQL results as chat shows them: how much of a result fits in the message's table, and the CSV file that carries a
result too large for it. Pure: no SDK, no I/O.

Slack shows one result per message as a native table: the answer's latest successful result with rows
(`native_table_run`). Where the workspace takes it, that is a `data_table` block (`DATA_TABLE`: paginated and
sortable, 100 rows and 20 columns, 10,000 characters across its cells), else the older `table` block (`TABLE_BLOCK`:
99 rows below the header, 20 columns). That result is shown whole when its rows, columns and cells fit the block's
limits; every other result is drawn as a small monospace table of `TABLE_ROWS` rows and `TABLE_COLUMNS` columns.
A result gets a CSV file when its table cannot show all of it, or when the executor stopped reading early
(`truncated`). Failed SQL gets no file. Cells read as on every surface (`core.answer.values`); the CSV keeps the
values themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.result_files import file_name, result_csv
from core.answer.model import Answer, ResultTable

TABLE_ROWS = 10  # rows the message's result table shows
TABLE_COLUMNS = 6  # columns the message's result table shows
NATIVE_ROWS = 99  # data rows of the `table` block (Slack: at most 100 rows, the header included)
NATIVE_COLUMNS = 20  # columns of either native table (Slack's limit)
NATIVE_CELL = 200  # characters of one native table cell before it is cut
NATIVE_CHARS = 12000  # characters of all `table` block cells together, so the message stays small


@dataclass(frozen=True)
class NativeTable:
    """Which Block Kit table block shows the message's result, and its limits: data rows below the header, and
    characters across all cells (`overhead` counted per cell on top of its text)."""

    block: Literal["data_table", "table"]
    rows: int
    chars: int
    overhead: int


#: Slack's `data_table` block: 2 to 101 rows with the header, at most 10,000 characters across all cells of the
#: message; a margin is kept for the header.
DATA_TABLE = NativeTable("data_table", rows=100, chars=9_800, overhead=0)
#: Slack's `table` block, for workspaces that refuse `data_table`.
TABLE_BLOCK = NativeTable("table", rows=NATIVE_ROWS, chars=NATIVE_CHARS, overhead=4)


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


def native_rows_shown(run: ResultTable, table: NativeTable = TABLE_BLOCK) -> int:
    """How many of the result's rows the native `table` shows: up to its row limit, within its characters."""
    width = min(len(run.columns), NATIVE_COLUMNS)
    budget = table.chars - sum(min(len(str(c)), NATIVE_CELL) for c in run.headers()[:width])
    shown = 0
    for row in run.cells()[: table.rows]:
        budget -= sum(min(max(len(v), 1) + table.overhead, NATIVE_CELL) for v in row[:width])
        if budget < 0:
            break
        shown += 1
    return max(shown, 1)


def needs_file(run: ResultTable, *, native: NativeTable | None = None) -> bool:
    """Whether the message's table shows less than this result holds (`native`: the native table the result has)."""
    if not run.succeeded:
        return False
    if run.truncated:
        return True
    if native is not None:
        return len(run.rows) > native_rows_shown(run, native) or len(run.columns) > NATIVE_COLUMNS
    return len(run.rows) > TABLE_ROWS or len(run.columns) > TABLE_COLUMNS


def result_files(answer: Answer, table: NativeTable = TABLE_BLOCK) -> list[ResultFile]:
    """One CSV per SQL result of the answer that the message's tables cannot show whole, in the answer's order
    (`table`: the native table block the message used)."""
    files: list[ResultFile] = []
    runs = answer.results
    native = native_table_run(runs)
    for number, run in enumerate(runs, start=1):
        if not needs_file(run, native=table if number - 1 == native else None):
            continue
        database = run.database or "result"
        rows = len(run.rows)
        title = f"Result of SQL {number} on {database}: {rows} row{'s' if rows != 1 else ''}"
        if run.truncated:
            title += " (more rows exist; only these were fetched)"
        files.append(ResultFile(filename=file_name(run, number), title=title, content=result_csv(run)))
    return files
