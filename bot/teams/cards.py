"""Adaptive Cards (schema 1.4) for Teams answers, and the plain text of a status message.

Pure data: `answer_card(answer)` turns the turn's `core.answer.model.Answer` into the card's JSON,
`answer_summary(answer)` into the one plain line (the answer without its Markdown) a notification shows. Result
cells read as on every surface (`core.answer.values`).
Schema 1.4 is what Teams renders on every client, so the result table is a ColumnSet per row with equal column
widths (the Table element is 1.5) and the SQL monospace text. Only the answer is a TextBlock, whose markdown Teams
renders; SQL, cell values and names are TextRuns inside RichTextBlocks, which are never read as markdown, so
`SELECT *` or `_` in a name shows as written. Everything that grows with the data is capped (text length, rows,
columns), and what was cut is said on the card, so a large result never makes the message too big for Teams.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.plain_text import plain_text
from core.answer.model import Answer, ResultTable
from core.answer.values import NULL_TEXT

CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_VERSION = "1.4"
CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"

MAX_ROWS = 10
MAX_COLUMNS = 6
MAX_ANSWER_CHARS = 4000
MAX_SQL_CHARS = 3000
MAX_CELL_CHARS = 60
MAX_SQL_SHOWN = 3
MAX_SUMMARY_CHARS = 200

_STATUS_HEADINGS = {
    "partial": ("Partial answer", "Warning"),
    "failed": ("No answer", "Attention"),
}


def status_text(text: str) -> str:
    """The text of a status message while a turn runs ("Searching tables…")."""
    line = " ".join(text.split())
    return f"\u23f3 {line}" if line else "\u23f3 Working\u2026"


def answer_summary(answer: Answer) -> str:
    """One plain line (no Markdown: notifications render none) for notifications and clients without the card."""
    text = " ".join(plain_text(answer.text).split())
    return _clip(text, MAX_SUMMARY_CHARS) if text else "tablescout answered"


def answer_card(answer: Answer) -> dict[str, Any]:
    """The Adaptive Card (a JSON-ready dict) showing one answer."""
    body: list[dict[str, Any]] = []
    heading = _STATUS_HEADINGS.get(answer.status)
    if heading is not None:
        body.append(_text(heading[0], weight="Bolder", color=heading[1]))
    text = answer.text.strip() or "(no answer text)"
    body.append(_text(_clip(text, MAX_ANSWER_CHARS)))
    runs = answer.results
    for run in runs[-MAX_SQL_SHOWN:]:
        body.extend(_sql_block(run))
    if len(runs) > MAX_SQL_SHOWN:
        body.append(_note(f"{len(runs) - MAX_SQL_SHOWN} earlier queries not shown."))
    shown = _result_run(runs)
    if shown is not None:
        body.extend(_result_table(shown))
    if answer.tables_used:
        body.append(_note(f"Tables used: {', '.join(answer.tables_used)}", separator=True))
    if answer.sources_note:
        body.append(_note(answer.sources_note))
    for warning in answer.warnings:
        body.append(_note(f"\u26a0 {warning}", color="Warning"))
    if answer.notes_saved:
        body.append(_note(f"Noted for: {', '.join(answer.notes_saved)}"))
    return {
        "type": "AdaptiveCard",
        "$schema": CARD_SCHEMA,
        "version": CARD_VERSION,
        "msteams": {"width": "Full"},
        "body": body,
    }


def card_attachment(card: Mapping[str, Any]) -> dict[str, Any]:
    """The message attachment (Bot Framework `Attachment` JSON) that carries `card`."""
    return {"contentType": CARD_CONTENT_TYPE, "content": dict(card)}


def _sql_block(run: ResultTable) -> list[dict[str, Any]]:
    blocks = [_note(f"SQL on {run.database or '?'}", weight="Bolder", separator=True)]
    blocks.append(_plain(_clip(run.sql.strip(), MAX_SQL_CHARS), font="Monospace"))
    if run.error:
        blocks.append(_note(f"Failed: {_clip(run.error, 300)}", color="Attention"))
    return blocks


def _result_run(runs: Sequence[ResultTable]) -> ResultTable | None:
    """The last query that ran without error and returned columns: the result the answer rests on."""
    usable = [run for run in runs if run.succeeded and run.columns]
    return usable[-1] if usable else None


def _result_table(run: ResultTable) -> list[dict[str, Any]]:
    columns = run.headers()
    shown_columns = columns[:MAX_COLUMNS]
    cells = run.cells()
    blocks: list[dict[str, Any]] = []
    if not run.rows:
        blocks.append(_note("The query returned no rows."))
    else:
        blocks.append(_row(shown_columns, weight="Bolder"))
        for row in cells[:MAX_ROWS]:
            blocks.append(_row([row[i] if i < len(row) else NULL_TEXT for i in range(len(shown_columns))]))
    cut: list[str] = []
    if len(run.rows) > MAX_ROWS:
        cut.append(f"first {MAX_ROWS} of {len(run.rows)} rows")
    if len(columns) > MAX_COLUMNS:
        cut.append(f"first {MAX_COLUMNS} of {len(columns)} columns")
    if cut:
        blocks.append(_note(f"Showing the {' and '.join(cut)}."))
    if run.truncated:
        blocks.append(_note("The result was truncated at the row limit; more rows exist.", color="Warning"))
    return blocks


def _row(values: Sequence[str], *, weight: str = "Default") -> dict[str, Any]:
    """One table row: a ColumnSet whose columns all stretch equally, so rows line up under the header."""
    columns = [
        {
            "type": "Column",
            "width": "stretch",
            "items": [_plain(_clip(" ".join(v.split()) or " ", MAX_CELL_CHARS), size="Small", weight=weight)],
        }
        for v in values
    ]
    return {"type": "ColumnSet", "spacing": "None", "columns": columns}


def _plain(text: str, *, size: str = "Default", weight: str = "Default", font: str = "Default") -> dict[str, Any]:
    """Text shown exactly as written (a TextRun is never read as markdown)."""
    run: dict[str, Any] = {"type": "TextRun", "text": text}
    for key, value in (("size", size), ("weight", weight), ("fontType", font)):
        if value != "Default":
            run[key] = value
    return {"type": "RichTextBlock", "inlines": [run]}


def _text(text: str, *, weight: str = "Default", color: str = "Default") -> dict[str, Any]:
    """Markdown text (the answer, headings)."""
    block: dict[str, Any] = {"type": "TextBlock", "text": text, "wrap": True}
    if weight != "Default":
        block["weight"] = weight
    if color != "Default":
        block["color"] = color
    return block


def _note(text: str, *, weight: str = "Default", color: str = "Default", separator: bool = False) -> dict[str, Any]:
    """A small, subtle line shown exactly as written (names of tables and databases stay intact)."""
    block = _plain(text, size="Small", weight=weight)
    run = block["inlines"][0]
    run["isSubtle"] = True
    if color != "Default":
        run["color"] = color
    block.update({"spacing": "Medium", "separator": True} if separator else {"spacing": "Small"})
    return block


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"
