"""Block Kit rendering of what tablescout posts in Slack: the status message shown while a turn runs, and the answer
that replaces it (the short answer, each SQL in a code block, the result as a native Block Kit table (one per message,
numbers right-aligned with thousands separators) or, for further results, a small aligned monospace table, the
tables used with a note for copies used on purpose, notes saved, and the 👍/👎 feedback buttons) with its plain-text
fallback for notifications (the answer without its Markdown).

Pure: no SDK, no I/O. Slack's limits hold for every message rendered here: a section's text is at most 3000
characters, a message has at most 50 blocks, and whatever is cut says so.

What is rendered is the turn's `core.answer.model.Answer`, as the turn engine queued it; each result cell reads as
on every surface (`core.answer.values`). The mrkdwn these blocks are made of is bot/slack/mrkdwn.py; the 👎 modal
and the verified-example review messages are bot/slack/feedback_blocks.py.
"""

from __future__ import annotations

import math
from typing import Any

from bot.plain_text import plain_text
from bot.slack.mrkdwn import (
    FALLBACK_LIMIT,
    FENCE,
    SECTION_LIMIT,
    SlackMessage,
    code_block,
    context_block,
    cut,
    display_width,
    escape,
    fit_width,
    mrkdwn,
    pad,
    section_block,
    split_sections,
)
from bot.slack.results import (
    NATIVE_CELL,
    NATIVE_COLUMNS,
    TABLE_BLOCK,
    TABLE_COLUMNS,
    TABLE_ROWS,
    NativeTable,
    native_rows_shown,
    native_table_run,
    needs_file,
)
from core.answer.model import Answer, ResultTable

MAX_BLOCKS = 50  # blocks in one message
ANSWER_SECTIONS = 6  # sections the answer text may take before it is cut
CELL_WIDTH = 24  # display columns of one result-table cell
STATUS_EMOJI = ":hourglass_flowing_sand:"
NO_ANSWER = "I have no answer to show."
EMPTY_CELL = "—"  # a native table cell needs at least one character; NULL and empty text show as a dash
DATA_TABLE_PAGE = 10  # rows on one page of a `data_table` block
FEEDBACK_ACTION = "answer_feedback"  # action_id of the 👍/👎 buttons (bot/slack/app.py listens for it)
FEEDBACK_GOOD = "good"
FEEDBACK_BAD = "bad"


# --- status ---------------------------------------------------------------------------------------------------------


def status_blocks(text: str) -> list[dict[str, Any]]:
    """The status message's blocks ("Searching tables…"): one small grey line."""
    return [context_block(f"{STATUS_EMOJI} {escape(text.strip() or 'Working…')}")]


def status_message(text: str) -> SlackMessage:
    return SlackMessage(text=cut(escape(text.strip() or "Working…"), FALLBACK_LIMIT), blocks=status_blocks(text))


def text_message(text: str) -> SlackMessage:
    """A short plain reply: one section of text."""
    body = escape(text.strip())
    return SlackMessage(text=cut(body, FALLBACK_LIMIT), blocks=[section_block(body)])


# --- answer ---------------------------------------------------------------------------------------------------------


def result_table(run: ResultTable) -> str:
    """The first `TABLE_ROWS` rows and `TABLE_COLUMNS` columns, aligned for a monospace font (numbers right)."""
    shown_columns = run.headers()[:TABLE_COLUMNS]
    width = len(shown_columns)
    shown_rows = [(list(row[:width]) + [None] * width)[:width] for row in run.rows[:TABLE_ROWS]]
    numeric = _numeric_columns(shown_rows, len(shown_columns))
    cells = [(row[:width] + [""] * width)[:width] for row in run.cells()[:TABLE_ROWS]]
    header = [fit_width(c, CELL_WIDTH) for c in shown_columns]
    body = [[fit_width(v, CELL_WIDTH) for v in row] for row in cells]
    widths = [max([display_width(header[i])] + [display_width(r[i]) for r in body]) for i in range(len(header))]
    lines = [
        "  ".join(pad(h, widths[i], numeric[i]) for i, h in enumerate(header)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(pad(v, widths[i], numeric[i]) for i, v in enumerate(r)).rstrip() for r in body]
    return "\n".join(lines)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numeric_columns(rows: list[list[Any]], width: int) -> list[bool]:
    """Per column: every non-NULL value is a number, and there is at least one."""
    return [
        all(_is_number(r[i]) for r in rows if r[i] is not None) and any(r[i] is not None for r in rows)
        for i in range(width)
    ]


def native_table(run: ResultTable, table: NativeTable = TABLE_BLOCK) -> dict[str, Any]:
    """The result as the message's native table block: a header row, then up to `native_rows_shown` rows and
    `NATIVE_COLUMNS` columns, each cell as its column's kind reads. Cells are raw text, so nothing in them is read as a
    mention or link. A `table` block right-aligns number columns; a `data_table` block pages and sorts, its number
    cells carrying their value (`raw_number`) so a column sorts by value."""
    names = run.headers()[:NATIVE_COLUMNS]
    width = len(names)
    shown = native_rows_shown(run, table)
    body = [(list(row[:width]) + [None] * width)[:width] for row in run.rows[:shown]]
    cells = [(row[:width] + [""] * width)[:width] for row in run.cells()[:shown]]

    def raw(text: str) -> dict[str, Any]:
        return {"type": "raw_text", "text": cut(text, NATIVE_CELL) if text.strip() else EMPTY_CELL}

    def cell(value: Any, text: str) -> dict[str, Any]:
        if _is_number(value) and math.isfinite(value) and text.strip():
            return {"type": "raw_number", "value": value, "text": cut(text, NATIVE_CELL)}
        return raw(text)

    header = [raw(n) for n in names]
    if table.block == "data_table":
        rows = [[cell(v, t) for v, t in zip(r, c, strict=True)] for r, c in zip(body, cells, strict=True)]
        caption = f"Result of the SQL on {run.database}" if run.database else "Result of the SQL"
        return {"type": "data_table", "caption": caption, "page_size": DATA_TABLE_PAGE, "rows": [header, *rows]}
    numeric = _numeric_columns(body, width)
    return {
        "type": "table",
        "column_settings": [{"align": "right" if numeric[i] else "left", "is_wrapped": True} for i in range(width)],
        "rows": [header] + [[raw(v) for v in row] for row in cells],
    }


def _result_note(run: ResultTable, native: NativeTable | None = None) -> str:
    rows, columns = run.rows, run.columns
    if not rows:
        return "No rows." if not run.truncated else "No rows were fetched."
    parts = []
    row_limit, column_limit = (
        (native_rows_shown(run, native), NATIVE_COLUMNS) if native is not None else (TABLE_ROWS, TABLE_COLUMNS)
    )
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


def _sql_blocks(run: ResultTable, native: NativeTable | None = None) -> list[dict[str, Any]]:
    database = escape(run.database or "?")
    failed = not run.succeeded
    title = f"SQL on *{database}*" + (" (failed)" if failed else "") + ":\n"
    sql = code_block(escape(run.sql.strip()), SECTION_LIMIT - len(title), "SQL")
    blocks = [section_block(title + sql)]
    if failed:
        blocks.append(context_block(f"Error: {escape(str(run.error))}"))
        return blocks
    if run.rows and native is not None:
        blocks.append(native_table(run, native))
    elif run.rows:
        table = escape(result_table(run))
        while len(table) + 2 * len(FENCE) > SECTION_LIMIT and "\n" in table:
            table = table.rsplit("\n", 1)[0]  # wide cells full of escapes: show fewer rows
        blocks.append(section_block(f"{FENCE}{table}{FENCE}"))
    blocks.append(context_block(_result_note(run, native)))
    return blocks


def _answer_sections(answer: str) -> list[dict[str, Any]]:
    pieces = split_sections(mrkdwn(answer.strip() or NO_ANSWER), SECTION_LIMIT)
    if len(pieces) > ANSWER_SECTIONS:
        pieces = pieces[:ANSWER_SECTIONS]
        pieces[-1] = cut(pieces[-1], SECTION_LIMIT - 40, "") + "\n… (answer shortened)"
    return [section_block(p) for p in pieces]


def _footer(answer: Answer) -> list[dict[str, Any]]:
    blocks = []
    texts = ["Tables used: " + ", ".join(escape(t) for t in answer.tables_used)] if answer.tables_used else []
    texts += [escape(answer.sources_note)] if answer.sources_note else []
    texts += [f":warning: {escape(w)}" for w in answer.warnings]
    if texts:
        blocks.append(context_block(*texts))
    if answer.notes_saved:
        blocks.append(context_block(":memo: Note saved on " + ", ".join(escape(t) for t in answer.notes_saved) + "."))
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


def _choose_runs(runs: list[ResultTable], budget: int, native: int | None, table: NativeTable) -> set[int]:
    """Which SQL runs fit in `budget` blocks: the latest successful ones first, then the latest failed ones."""
    order = [i for i in reversed(range(len(runs))) if runs[i].succeeded]
    order += [i for i in reversed(range(len(runs))) if not runs[i].succeeded]
    chosen: set[int] = set()
    for i in order:
        size = len(_sql_blocks(runs[i], table if i == native else None))
        if size <= budget:
            chosen.add(i)
            budget -= size
    return chosen


def answer_blocks(answer: Answer, *, feedback: bool = True, table: NativeTable = TABLE_BLOCK) -> list[dict[str, Any]]:
    """The answer's blocks, at most `MAX_BLOCKS`: answer text, SQL and results (the latest result with rows as the
    message's one native table, a `table` block; a `data_table` block where the workspace takes it), tables used,
    why these tables, warnings, notes saved, and the feedback buttons under an answer that ran SQL (not under a
    note's confirmation or a refusal) unless `feedback` is off."""
    head = _answer_sections(answer.text)
    foot = _footer(answer) + ([feedback_block()] if feedback and answer.results else [])
    runs = answer.results
    native = native_table_run(runs)
    budget = MAX_BLOCKS - len(head) - len(foot)
    total = sum(len(_sql_blocks(r, table if i == native else None)) for i, r in enumerate(runs))
    chosen = set(range(len(runs))) if total <= budget else _choose_runs(runs, budget - 1, native, table)
    middle: list[dict[str, Any]] = []
    for i, run in enumerate(runs):
        if i in chosen:
            middle += _sql_blocks(run, table if i == native else None)
    left_out = len(runs) - len(chosen)
    if left_out:
        middle.append(context_block(f"{left_out} more SQL statement{'s' if left_out != 1 else ''} not shown here."))
    return head + middle + foot


def answer_text(answer: Answer) -> str:
    """The notification fallback: the answer text without its Markdown (or what the notes confirm), plain and
    short; Slack shows it in notifications and where blocks cannot be shown, which render no formatting."""
    text = plain_text(answer.text).strip()
    if not text and answer.notes_saved:
        text = "Note saved on " + ", ".join(answer.notes_saved) + "."
    return cut(escape(text or NO_ANSWER), FALLBACK_LIMIT)


def answer_message(answer: Answer, table: NativeTable = TABLE_BLOCK) -> SlackMessage:
    """The message that replaces the status message once the turn has answered (`table`: the native table block)."""
    return SlackMessage(text=answer_text(answer), blocks=answer_blocks(answer, table=table))
