"""SQL results as chat shows them: how much of a result fits in the message's small table, and the CSV file that
carries a result too large for it. Pure: no SDK, no I/O.

A result gets a CSV file when the message's table cannot show all of it: more rows than `TABLE_ROWS`, more columns
than `TABLE_COLUMNS`, or a result the executor stopped reading early (`truncated`). Failed SQL gets no file.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Any

TABLE_ROWS = 10  # rows the message's result table shows
TABLE_COLUMNS = 6  # columns the message's result table shows


@dataclass(frozen=True)
class ResultFile:
    """A CSV export of one SQL result, ready to upload next to the answer."""

    filename: str
    title: str
    content: bytes


def succeeded(run: dict[str, Any]) -> bool:
    return not run.get("error")


def needs_file(run: dict[str, Any]) -> bool:
    """Whether the message's table shows less than this result holds."""
    if not succeeded(run):
        return False
    rows = run.get("rows") or []
    columns = run.get("columns") or []
    return bool(run.get("truncated")) or len(rows) > TABLE_ROWS or len(columns) > TABLE_COLUMNS


def cell_text(value: Any) -> str:
    """A result cell as text: NULL becomes an empty cell, booleans and numbers their usual spelling."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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
    for number, run in enumerate(payload.get("sql") or [], start=1):
        if not needs_file(run):
            continue
        database = str(run.get("database") or "result")
        rows = len(run.get("rows") or [])
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", database).strip("-") or "result"
        title = f"Result of SQL {number} on {database}: {rows} row{'s' if rows != 1 else ''}"
        if run.get("truncated"):
            title += " (more rows exist; only these were fetched)"
        files.append(ResultFile(filename=f"{slug}-result-{number}.csv", title=title, content=result_csv(run)))
    return files
