"""Block Kit rendering of what tablescout posts in Slack: the status message shown while a turn runs, and the answer
that replaces it (the short answer, each SQL in a code block, the result as a native Block Kit table (one per message,
numbers right-aligned with thousands separators) or, for further results, a small aligned monospace table, the
tables used with a note for copies used on purpose, notes saved, and the 👍/👎 feedback buttons) with its plain-text
fallback for notifications (the answer without its Markdown).

Pure: no SDK, no I/O. Slack's limits hold for every message rendered here: a section's text is at most 3000
characters, a message has at most 50 blocks, and whatever is cut says so.

What is rendered is the turn's `core.answer.model.Answer`, as the turn engine queued it; each result cell reads as
on every surface (`core.answer.values`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from bot.plain_text import plain_text
from bot.slack.results import (
    NATIVE_CELL,
    NATIVE_COLUMNS,
    TABLE_COLUMNS,
    TABLE_ROWS,
    native_rows_shown,
    native_table_run,
    needs_file,
)
from core.answer.model import Answer, ResultTable

SECTION_LIMIT = 3000  # characters of mrkdwn in one section or context element
MAX_BLOCKS = 50  # blocks in one message
FALLBACK_LIMIT = 3000  # characters of the notification text (Slack allows more; a notification needs less)
ANSWER_SECTIONS = 6  # sections the answer text may take before it is cut
CELL_WIDTH = 24  # display columns of one result-table cell
FENCE = "```"
STATUS_EMOJI = ":hourglass_flowing_sand:"
NO_ANSWER = "I have no answer to show."
EMPTY_CELL = "—"  # a native table cell needs at least one character; NULL and empty text show as a dash
FEEDBACK_ACTION = "answer_feedback"  # action_id of the 👍/👎 buttons (bot/slack/app.py listens for it)
FEEDBACK_GOOD = "good"
FEEDBACK_BAD = "bad"


@dataclass(frozen=True)
class SlackMessage:
    """A message to post: `text` is the notification fallback, `blocks` what Slack shows."""

    text: str
    blocks: list[dict[str, Any]]


# --- text -----------------------------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """Slack's three control characters escaped, so user and database text never becomes a mention or link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def mrkdwn(text: str) -> str:
    """A model's Markdown answer as Slack mrkdwn: escaped, `**bold**` and `# headings` bold, `[text](url)` links."""
    out = escape(text)
    out = _HEADING.sub(r"*\1*", out)
    out = _BOLD.sub(r"*\1*", out)
    return _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1).replace('|', '/')}>", out)


def cut(text: str, limit: int, note: str = "…") -> str:
    """`text` within `limit` characters, ending in `note` when cut; never splits an escape like `&amp;`."""
    if len(text) <= limit:
        return text
    keep = text[: max(0, limit - len(note))]
    amp = keep.rfind("&")
    if amp != -1 and ";" not in keep[amp:] and len(keep) - amp <= 5:
        keep = keep[:amp]
    return keep + note


def display_width(text: str) -> int:
    """Columns `text` takes in a monospace font: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1 for ch in text)


def _fit_width(text: str, width: int) -> str:
    if display_width(text) <= width:
        return text
    out = ""
    for ch in text:
        if display_width(out + ch) > width - 1:
            break
        out += ch
    return out + "…"


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * (width - display_width(text))
    return gap + text if right else text + gap


def _chunks(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, split at line ends; a code fence open at a split is closed
    there and reopened in the next piece."""
    room = limit - 2 * (len(FENCE) + 1)
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    in_fence = False
    fence_at_start = False

    def flush() -> None:
        nonlocal current, size, fence_at_start
        if not current:
            return
        body = "\n".join(current)
        if fence_at_start:
            body = FENCE + "\n" + body
        if in_fence:
            body += "\n" + FENCE
        pieces.append(body)
        current, size, fence_at_start = [], 0, in_fence

    for line in text.split("\n"):
        while len(line) > room:  # a single line longer than a piece
            flush()
            current, size = [line[:room]], room
            line = line[room:]
        if size + len(line) + 1 > room:
            flush()
        current.append(line)
        size += len(line) + 1
        if line.lstrip().startswith(FENCE) and line.strip().count(FENCE) % 2 == 1:
            in_fence = not in_fence
    flush()
    return pieces


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": cut(text, SECTION_LIMIT)}}


def _context(*texts: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": cut(t, SECTION_LIMIT)} for t in texts[:10]]}


def _code(text: str, limit: int, what: str) -> str:
    """`text` (already escaped) as a code block within `limit` characters, cut with a note saying what was cut."""
    fenced = f"{FENCE}{text}{FENCE}"
    if len(fenced) <= limit:
        return fenced
    hidden = len(text)
    note = f"\n… ({what} cut here, {{}} more characters)"
    body = cut(text, limit - len(FENCE) * 2 - len(note) - 8, "")
    return f"{FENCE}{body}{note.format(hidden - len(body))}{FENCE}"


# --- status ---------------------------------------------------------------------------------------------------------


def status_blocks(text: str) -> list[dict[str, Any]]:
    """The status message's blocks ("Searching tables…"): one small grey line."""
    return [_context(f"{STATUS_EMOJI} {escape(text.strip() or 'Working…')}")]


def status_message(text: str) -> SlackMessage:
    return SlackMessage(text=cut(escape(text.strip() or "Working…"), FALLBACK_LIMIT), blocks=status_blocks(text))


def text_message(text: str) -> SlackMessage:
    """A short plain reply: one section of text."""
    body = escape(text.strip())
    return SlackMessage(text=cut(body, FALLBACK_LIMIT), blocks=[_section(body)])


# --- answer ---------------------------------------------------------------------------------------------------------


def result_table(run: ResultTable) -> str:
    """The first `TABLE_ROWS` rows and `TABLE_COLUMNS` columns, aligned for a monospace font (numbers right)."""
    shown_columns = [str(c) for c in run.columns[:TABLE_COLUMNS]]
    width = len(shown_columns)
    shown_rows = [(list(row[:width]) + [None] * width)[:width] for row in run.rows[:TABLE_ROWS]]
    numeric = _numeric_columns(shown_rows, len(shown_columns))
    cells = [(row[:width] + [""] * width)[:width] for row in run.cells()[:TABLE_ROWS]]
    header = [_fit_width(c, CELL_WIDTH) for c in shown_columns]
    body = [[_fit_width(v, CELL_WIDTH) for v in row] for row in cells]
    widths = [max([display_width(header[i])] + [display_width(r[i]) for r in body]) for i in range(len(header))]
    lines = [
        "  ".join(_pad(h, widths[i], numeric[i]) for i, h in enumerate(header)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(_pad(v, widths[i], numeric[i]) for i, v in enumerate(r)).rstrip() for r in body]
    return "\n".join(lines)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numeric_columns(rows: list[list[Any]], width: int) -> list[bool]:
    """Per column: every non-NULL value is a number, and there is at least one."""
    return [
        all(_is_number(r[i]) for r in rows if r[i] is not None) and any(r[i] is not None for r in rows)
        for i in range(width)
    ]


def native_table(run: ResultTable) -> dict[str, Any]:
    """A Block Kit `table` block: a header row, then up to `native_rows_shown` rows and `NATIVE_COLUMNS` columns;
    number columns right-aligned, each cell as its column's kind reads. Cells are raw text, so nothing in them is
    read as a mention or link."""
    names = [str(c) for c in run.columns[:NATIVE_COLUMNS]]
    width = len(names)
    shown = native_rows_shown(run)
    body = [(list(row[:width]) + [None] * width)[:width] for row in run.rows[:shown]]
    cells = [(row[:width] + [""] * width)[:width] for row in run.cells()[:shown]]
    numeric = _numeric_columns(body, width)

    def raw(text: str) -> dict[str, Any]:
        return {"type": "raw_text", "text": cut(text, NATIVE_CELL) if text.strip() else EMPTY_CELL}

    return {
        "type": "table",
        "column_settings": [{"align": "right" if numeric[i] else "left", "is_wrapped": True} for i in range(width)],
        "rows": [[raw(n) for n in names]] + [[raw(v) for v in row] for row in cells],
    }


def _result_note(run: ResultTable, native: bool = False) -> str:
    rows, columns = run.rows, run.columns
    if not rows:
        return "No rows." if not run.truncated else "No rows were fetched."
    parts = []
    row_limit, column_limit = (native_rows_shown(run), NATIVE_COLUMNS) if native else (TABLE_ROWS, TABLE_COLUMNS)
    if len(rows) > row_limit or len(columns) > column_limit:
        shown = f"Showing {min(len(rows), row_limit)} of {len(rows)} rows"
        if len(columns) > column_limit:
            shown += f" and {column_limit} of {len(columns)} columns"
        parts.append(shown + ".")
    else:
        parts.append(f"{len(rows)} row{'s' if len(rows) != 1 else ''}.")
    if run.truncated:
        parts.append(f"The result was truncated: more rows exist than the {len(rows)} fetched.")
    if needs_file(run, native=native):
        parts.append("The fetched rows are attached as a CSV file.")
    return " ".join(parts)


def _sql_blocks(run: ResultTable, native: bool = False) -> list[dict[str, Any]]:
    database = escape(run.database or "?")
    failed = not run.succeeded
    title = f"SQL on *{database}*" + (" (failed)" if failed else "") + ":\n"
    sql = _code(escape(run.sql.strip()), SECTION_LIMIT - len(title), "SQL")
    blocks = [_section(title + sql)]
    if failed:
        blocks.append(_context(f"Error: {escape(str(run.error))}"))
        return blocks
    if run.rows and native:
        blocks.append(native_table(run))
    elif run.rows:
        table = escape(result_table(run))
        while len(table) + 2 * len(FENCE) > SECTION_LIMIT and "\n" in table:
            table = table.rsplit("\n", 1)[0]  # wide cells full of escapes: show fewer rows
        blocks.append(_section(f"{FENCE}{table}{FENCE}"))
    blocks.append(_context(_result_note(run, native)))
    return blocks


def _answer_sections(answer: str) -> list[dict[str, Any]]:
    pieces = _chunks(mrkdwn(answer.strip() or NO_ANSWER), SECTION_LIMIT)
    if len(pieces) > ANSWER_SECTIONS:
        pieces = pieces[:ANSWER_SECTIONS]
        pieces[-1] = cut(pieces[-1], SECTION_LIMIT - 40, "") + "\n… (answer shortened)"
    return [_section(p) for p in pieces]


def _footer(answer: Answer) -> list[dict[str, Any]]:
    blocks = []
    if answer.tables_used:
        texts = ["Tables used: " + ", ".join(escape(t) for t in answer.tables_used)]
        texts += [f":warning: {escape(w)}" for w in answer.warnings]
        blocks.append(_context(*texts))
    elif answer.warnings:
        blocks.append(_context(*[f":warning: {escape(w)}" for w in answer.warnings]))
    if answer.notes_saved:
        blocks.append(_context(":memo: Note saved on " + ", ".join(escape(t) for t in answer.notes_saved) + "."))
    return blocks


def feedback_block() -> dict[str, Any]:
    """Slack's 👍/👎 feedback buttons under the answer (a `context_actions` block with a `feedback_buttons`
    element); a click reaches bot/slack/app.py as a block action with `FEEDBACK_ACTION` and the button's value."""
    return {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK_ACTION,
                "positive_button": {
                    "text": {"type": "plain_text", "text": "Good answer"},
                    "accessibility_label": "This answer was right",
                    "value": FEEDBACK_GOOD,
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "Wrong answer"},
                    "accessibility_label": "This answer was wrong",
                    "value": FEEDBACK_BAD,
                },
            }
        ],
    }


def _choose_runs(runs: list[ResultTable], budget: int, native: int | None) -> set[int]:
    """Which SQL runs fit in `budget` blocks: the latest successful ones first, then the latest failed ones."""
    order = [i for i in reversed(range(len(runs))) if runs[i].succeeded]
    order += [i for i in reversed(range(len(runs))) if not runs[i].succeeded]
    chosen: set[int] = set()
    for i in order:
        size = len(_sql_blocks(runs[i], i == native))
        if size <= budget:
            chosen.add(i)
            budget -= size
    return chosen


def answer_blocks(answer: Answer, *, feedback: bool = True) -> list[dict[str, Any]]:
    """The answer's blocks, at most `MAX_BLOCKS`: answer text, SQL and results (the latest result with rows as the
    message's one native table), tables used, warnings, notes saved, and the feedback buttons unless `feedback` is
    off."""
    head = _answer_sections(answer.text)
    foot = _footer(answer) + ([feedback_block()] if feedback else [])
    runs = answer.results
    native = native_table_run(runs)
    budget = MAX_BLOCKS - len(head) - len(foot)
    total = sum(len(_sql_blocks(r, i == native)) for i, r in enumerate(runs))
    chosen = set(range(len(runs))) if total <= budget else _choose_runs(runs, budget - 1, native)
    middle: list[dict[str, Any]] = []
    for i, run in enumerate(runs):
        if i in chosen:
            middle += _sql_blocks(run, i == native)
    left_out = len(runs) - len(chosen)
    if left_out:
        middle.append(_context(f"{left_out} more SQL statement{'s' if left_out != 1 else ''} not shown here."))
    return head + middle + foot


def answer_text(answer: Answer) -> str:
    """The notification fallback: the answer text without its Markdown (or what the notes confirm), plain and
    short; Slack shows it in notifications and where blocks cannot be shown, which render no formatting."""
    text = plain_text(answer.text).strip()
    if not text and answer.notes_saved:
        text = "Note saved on " + ", ".join(answer.notes_saved) + "."
    return cut(escape(text or NO_ANSWER), FALLBACK_LIMIT)


def answer_message(answer: Answer) -> SlackMessage:
    """The message that replaces the status message once the turn has answered."""
    return SlackMessage(text=answer_text(answer), blocks=answer_blocks(answer))


# --- feedback -------------------------------------------------------------------------------------------------------

FEEDBACK_REASON_VIEW = "feedback_reason"  # callback_id of the modal that asks why an answer was wrong
REASON_BLOCK = "reason"
REASON_ACTION = "reason"


def feedback_reason_view(turn_id: int) -> dict[str, Any]:
    """The modal a 👎 opens: one optional multi-line field for what was wrong. `private_metadata` carries the turn
    (Slack signs the submission, and only the user's own 👎 on that turn takes the reason)."""
    return {
        "type": "modal",
        "callback_id": FEEDBACK_REASON_VIEW,
        "private_metadata": str(turn_id),
        "title": {"type": "plain_text", "text": "What was wrong?"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Skip"},
        "blocks": [
            {
                "type": "input",
                "block_id": REASON_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": "What should the answer have been? (optional)"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": REASON_ACTION,
                    "multiline": True,
                    "max_length": 2000,
                },
            }
        ],
    }


# --- verified examples for admins -----------------------------------------------------------------------------------

EXAMPLE_APPROVE = "example_approve"  # action_ids of the buttons on a proposed example (bot/slack/example_review.py)
EXAMPLE_REJECT = "example_reject"
EXAMPLE_BLOCK = "example_review"
SQL_LIMIT = 2500  # characters of an example's SQL shown


@dataclass(frozen=True)
class ExampleShown:
    """What a review message shows of a proposed example (the admin may see every table it reads)."""

    id: int
    database: str
    question: str
    sql: str
    tables: list[str]
    proposed_by: str  # the Slack user id of the asker whose 👍 proposed it, or "" for another platform


def _example_blocks(example: ExampleShown) -> list[dict[str, Any]]:
    who = f"<@{escape(example.proposed_by)}>" if example.proposed_by else "an asker"
    tables = ", ".join(f"{escape(example.database)}.{escape(t)}" for t in example.tables)
    return [
        _section(
            f":bulb: *Proposed verified example #{example.id}* on *{escape(example.database)}*: {who} marked the "
            "answer to this question as right."
        ),
        _section("*Question*\n>" + escape(" ".join(example.question.split()))),
        _section("*SQL*\n" + _code(escape(example.sql.strip()), SQL_LIMIT + 2 * len(FENCE), "SQL")),
        _context(
            f"Reads {tables}. Approved, it is shown to the model for similar questions (to those who may see these "
            f"tables) and ranks these tables in search. From a terminal: `tablescout examples approve {example.id}`."
        ),
    ]


def example_review_message(example: ExampleShown) -> SlackMessage:
    """The message an admin gets when a 👍 proposes an example: what it is, with Approve and Reject buttons."""
    buttons = [
        {
            "type": "button",
            "action_id": EXAMPLE_APPROVE,
            "text": {"type": "plain_text", "text": "Approve"},
            "style": "primary",
            "value": str(example.id),
        },
        {
            "type": "button",
            "action_id": EXAMPLE_REJECT,
            "text": {"type": "plain_text", "text": "Reject"},
            "style": "danger",
            "value": str(example.id),
        },
    ]
    blocks = [*_example_blocks(example), {"type": "actions", "block_id": EXAMPLE_BLOCK, "elements": buttons}]
    return SlackMessage(f"Proposed verified example #{example.id} on {example.database}", blocks)


def example_decided_message(example: ExampleShown, line: str) -> SlackMessage:
    """The review message once decided: the buttons replaced by what was decided, by whom (`line`, mrkdwn)."""
    return SlackMessage(
        f"Verified example #{example.id}: {plain_text(line)}", [*_example_blocks(example), _context(line)]
    )
