"""Adaptive Cards (schema 1.4) for Teams answers, and the plain text of a status message.

Pure data: `answer_card(payload)` turns the outbox "answer" payload written by the turn engine
(`{"status", "answer", "rounds", "tables_used", "sql": [{"database", "sql", "columns", "rows", "truncated",
"error"}], "notes_saved"}`) into the card's JSON, `answer_summary(payload)` into the one plain line (the answer
without its Markdown) a notification shows.
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


def answer_summary(payload: Mapping[str, Any]) -> str:
    """One plain line (no Markdown: notifications render none) for notifications and clients without the card."""
    answer = " ".join(plain_text(str(payload.get("answer") or "")).split())
    return _clip(answer, MAX_SUMMARY_CHARS) if answer else "tablescout answered"


def answer_card(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The Adaptive Card (a JSON-ready dict) showing one answer payload."""
    body: list[dict[str, Any]] = []
    heading = _STATUS_HEADINGS.get(str(payload.get("status") or ""))
    if heading is not None:
        body.append(_text(heading[0], weight="Bolder", color=heading[1]))
    answer = str(payload.get("answer") or "").strip() or "(no answer text)"
    body.append(_text(_clip(answer, MAX_ANSWER_CHARS)))
    runs: list[Mapping[str, Any]] = [r for r in payload.get("sql") or [] if isinstance(r, Mapping)]
    for run in runs[-MAX_SQL_SHOWN:]:
        body.extend(_sql_block(run))
    if len(runs) > MAX_SQL_SHOWN:
        body.append(_note(f"{len(runs) - MAX_SQL_SHOWN} earlier queries not shown."))
    shown = _result_run(runs)
    if shown is not None:
        body.extend(_result_table(shown))
    tables = [str(t) for t in payload.get("tables_used") or []]
    if tables:
        body.append(_note(f"Tables used: {', '.join(tables)}", separator=True))
    notes = [str(t) for t in payload.get("notes_saved") or []]
    if notes:
        body.append(_note(f"Noted for: {', '.join(notes)}"))
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


def _sql_block(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    database = str(run.get("database") or "?")
    blocks = [_note(f"SQL on {database}", weight="Bolder", separator=True)]
    blocks.append(_plain(_clip(str(run.get("sql") or "").strip(), MAX_SQL_CHARS), font="Monospace"))
    error = run.get("error")
    if error:
        blocks.append(_note(f"Failed: {_clip(str(error), 300)}", color="Attention"))
    return blocks


def _result_run(runs: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The last query that ran without error and returned columns: the result the answer rests on."""
    usable = [run for run in runs if not run.get("error") and run.get("columns")]
    return usable[-1] if usable else None


def _result_table(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    columns = [str(c) for c in run.get("columns") or []]
    rows = [list(r) for r in run.get("rows") or [] if isinstance(r, Sequence) and not isinstance(r, str)]
    shown_columns = columns[:MAX_COLUMNS]
    shown_rows = rows[:MAX_ROWS]
    blocks: list[dict[str, Any]] = []
    if not rows:
        blocks.append(_note("The query returned no rows."))
    else:
        blocks.append(_row(shown_columns, weight="Bolder"))
        for row in shown_rows:
            values = [_format(row[i] if i < len(row) else None) for i in range(len(shown_columns))]
            blocks.append(_row(values))
    cut: list[str] = []
    if len(rows) > MAX_ROWS:
        cut.append(f"first {MAX_ROWS} of {len(rows)} rows")
    if len(columns) > MAX_COLUMNS:
        cut.append(f"first {MAX_COLUMNS} of {len(columns)} columns")
    if cut:
        blocks.append(_note(f"Showing the {' and '.join(cut)}."))
    if run.get("truncated"):
        blocks.append(_note("The result was truncated at the row limit; more rows exist.", color="Warning"))
    return blocks


def _format(value: Any) -> str:
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:,.4f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


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
