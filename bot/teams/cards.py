"""Adaptive Cards (schema 1.4) for Teams answers, and the plain text of a status message.

Pure data: `answer_card(answer)` turns the turn's `core.answer.model.Answer` into the card's JSON,
`answer_summary(answer)` into the one plain line (the answer without its Markdown) a notification shows. Result
cells read as on every surface (`core.answer.values`). The card is schema 1.4, what Teams renders on every client;
the result is a 1.5 `Table` element with a ColumnSet fallback for clients without it, and a link to the whole result
(bot/teams/result_table.py). Only the answer is a TextBlock, whose markdown Teams renders; SQL, cell values and
names are TextRuns inside RichTextBlocks, which are never read as markdown, so `SELECT *` or `_` in a name shows as
written. Everything that grows with the data is capped (text length, rows, columns), and what was cut is said on the
card, so a large result never makes the message too big for Teams.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bot.plain_text import plain_text
from bot.teams.result_table import CARD_BYTES, download_action, result_elements, result_run, shown_note
from core.answer.model import Answer, ResultTable

CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_VERSION = "1.4"
CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"

MAX_ANSWER_CHARS = 4000
MAX_SQL_CHARS = 3000
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


def answer_card(answer: Answer, files_url: str | None = None) -> dict[str, Any]:
    """The Adaptive Card (a JSON-ready dict) showing one answer; `files_url`: the bot server's address for the link
    to the whole result (bot/result_files.py), None for none."""
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
    shown = result_run(runs)
    result_at = len(body)
    if answer.tables_used:
        body.append(_note(f"Tables used: {', '.join(answer.tables_used)}", separator=True))
    if answer.sources_note:
        body.append(_note(answer.sources_note))
    for warning in answer.warnings:
        body.append(_note(f"\u26a0 {warning}", color="Warning"))
    if answer.notes_saved:
        body.append(_note(f"Noted for: {', '.join(answer.notes_saved)}"))
    if shown is not None:  # the result gets what the rest of the card leaves
        elements, rows = result_elements(runs[shown], CARD_BYTES - len(json.dumps(body, ensure_ascii=False).encode()))
        action, link = download_action(answer, files_url, rows)
        body[result_at:result_at] = elements + shown_note(runs[shown], rows, link)
    card = {
        "type": "AdaptiveCard",
        "$schema": CARD_SCHEMA,
        "version": CARD_VERSION,
        "msteams": {"width": "Full"},
        "body": body,
    }
    return card | {"actions": [action]} if shown is not None and action is not None else card


def card_attachment(card: Mapping[str, Any]) -> dict[str, Any]:
    """The message attachment (Bot Framework `Attachment` JSON) that carries `card`."""
    return {"contentType": CARD_CONTENT_TYPE, "content": dict(card)}


def _sql_block(run: ResultTable) -> list[dict[str, Any]]:
    blocks = [_note(f"SQL on {run.database or '?'}", weight="Bolder", separator=True)]
    blocks.append(_plain(_clip(run.sql.strip(), MAX_SQL_CHARS), font="Monospace"))
    if run.error:
        blocks.append(_note(f"Failed: {_clip(run.error, 300)}", color="Attention"))
    return blocks


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
