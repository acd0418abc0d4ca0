"""The answer's result in a Teams card: an Adaptive Card `Table`, a fallback for clients without it, and a link to the
whole result.

The `Table` element (Adaptive Cards 1.5) shows the first rows that fit what the rest of the card leaves of
`CARD_BYTES` (under the 28 KB Teams takes for a message), up to `TABLE_ROWS`, and `MAX_COLUMNS` columns; a client
that renders only 1.4 (Teams mobile) shows its `fallback`: the first `FALLBACK_ROWS` rows as ColumnSets. Whatever
the card cannot show (more rows or columns, or a result the executor stopped reading early) is one click away: a
"Download all N rows (CSV)" link to the bot server (bot/result_files.py) when the answer has a file key and the
conversation a base URL, otherwise a sentence saying how many rows there are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.result_files import file_link
from core.answer.model import Answer, ResultTable
from core.answer.values import NULL_TEXT

MAX_COLUMNS = 6
TABLE_ROWS = 50
FALLBACK_ROWS = 5
MAX_CELL_CHARS = 60
#: JSON bytes the whole card may take, so the message stays under Teams' 28 KB with room for its envelope.
CARD_BYTES = 26_000
#: What the result's elements get at least, however long the rest of the card is.
MIN_RESULT_BYTES = 6_000


def result_run(runs: Sequence[ResultTable]) -> int | None:
    """The index of the last query that ran without error and returned columns: the result the answer rests on."""
    usable = [i for i, run in enumerate(runs) if run.succeeded and run.columns]
    return usable[-1] if usable else None


def result_elements(run: ResultTable, budget: int = CARD_BYTES) -> tuple[list[dict[str, Any]], int]:
    """The card elements showing `run` (its table, or a line saying it has no rows) within `budget` JSON bytes (at
    least `MIN_RESULT_BYTES`), and how many rows they show."""
    budget = max(budget, MIN_RESULT_BYTES)
    if not run.rows:
        return [_note("The query returned no rows.")], 0
    names = run.headers()[:MAX_COLUMNS]
    cells = [[_cell(row, i) for i in range(len(names))] for row in run.cells()]
    fallback = {"type": "Container", "items": [_row(names, bold=True), *(_row(r) for r in cells[:FALLBACK_ROWS])]}
    shown = min(len(cells), TABLE_ROWS)
    while True:
        table = _table(names, cells[:shown], fallback)
        if shown <= 1 or len(json.dumps(table, ensure_ascii=False).encode()) <= budget:
            return [table], shown
        shown = max(1, shown * 3 // 4)


def shown_note(run: ResultTable, shown: int, link: str | None) -> list[dict[str, Any]]:
    """What the table leaves out, said plainly, and the link to the whole result when there is one."""
    columns = run.headers()
    cut: list[str] = []
    if len(run.rows) > shown:
        cut.append(f"first {shown} of {len(run.rows):,} rows")
    if len(columns) > MAX_COLUMNS:
        cut.append(f"first {MAX_COLUMNS} of {len(columns)} columns")
    notes = []
    if cut:
        notes.append(_note(f"Showing the {' and '.join(cut)}."))
    if run.truncated:
        notes.append(_note("The result was truncated at the row limit; more rows exist.", color="Warning"))
    if (cut or run.truncated) and link is None:
        notes.append(_note("Ask me to narrow the question to see the rest here."))
    return notes


def download_action(answer: Answer, files_url: str | None, shown: int) -> tuple[dict[str, Any] | None, str | None]:
    """The card's "Download all N rows (CSV)" action for the result it shows (`shown` of its rows) and the link, when
    the result is more than the card shows and the answer can be linked; (None, None) otherwise."""
    index = result_run(answer.results)
    if index is None or not answer.file_key or not files_url:
        return None, None
    run = answer.results[index]
    if len(run.rows) <= shown and len(run.headers()) <= MAX_COLUMNS and not run.truncated:
        return None, None
    link = file_link(files_url, answer.file_key, index + 1)
    rows = len(run.rows)
    title = f"Download all {rows:,} row{'s' if rows != 1 else ''} (CSV)"
    return {"type": "Action.OpenUrl", "title": title, "url": link}, link


def _cell(row: Sequence[str], index: int) -> str:
    value = row[index] if index < len(row) else NULL_TEXT
    text = " ".join(value.split()) or " "
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1].rstrip() + "\u2026"


def _table(names: Sequence[str], rows: Sequence[Sequence[str]], fallback: dict[str, Any]) -> dict[str, Any]:
    def table_row(values: Sequence[str], bold: bool = False) -> dict[str, Any]:
        # a TextRun is never read as markdown, so `SELECT *` or `_` in a cell shows as written
        return {"type": "TableRow", "cells": [{"type": "TableCell", "items": [_rich(v, bold=bold)]} for v in values]}

    return {
        "type": "Table",
        "columns": [{"width": 1} for _ in names],
        "firstRowAsHeader": True,
        "showGridLines": True,
        "rows": [table_row(names, bold=True), *(table_row(r) for r in rows)],
        "fallback": fallback,
    }


def _rich(text: str, *, bold: bool = False) -> dict[str, Any]:
    run: dict[str, Any] = {"type": "TextRun", "text": text}
    if bold:
        run["weight"] = "Bolder"
    return {"type": "RichTextBlock", "inlines": [run]}


def _row(values: Sequence[str], *, bold: bool = False) -> dict[str, Any]:
    """One fallback row: a ColumnSet whose columns all stretch equally, so rows line up under the header."""
    columns = [{"type": "Column", "width": "stretch", "items": [_rich(v, bold=bold)]} for v in values]
    return {"type": "ColumnSet", "spacing": "None", "columns": columns}


def _note(text: str, *, color: str = "Default") -> dict[str, Any]:
    run: dict[str, Any] = {"type": "TextRun", "text": text, "size": "Small", "isSubtle": True}
    if color != "Default":
        run["color"] = color
    return {"type": "RichTextBlock", "inlines": [run], "spacing": "Small"}
