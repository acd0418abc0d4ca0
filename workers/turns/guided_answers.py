"""What the guided path says when it ends (SPEC §4): the answer written from the rows, and the plain sentences for
a question it could not answer (no permission, nothing found, no rows, an SQL error, more than one database)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.answer.model import Status
from workers.tools.base import SqlRecord
from workers.turns.answers import result_table


@dataclass
class GuidedAnswer:
    status: Status  # "answered" or "partial"
    answer: str
    error: str | None
    #: What ended the turn, for the store and the benchmark: "answer", "ambiguity", "no_permission",
    #: "nothing_found", "sql_error" (the repair failed too), "empty" (no rows after the re-search).
    step: str


NO_PERMISSION = (
    "The data for this question exists, but you do not have permission to see it. Ask an administrator for access."
)
NOTHING_FOUND = (
    "I could not find tables that hold this. Try other words for what you are looking for, or name the database."
)
#: Rows written out in an answer; the rest are in the result's rows.
ANSWER_ROWS = 10


def rows_answer(record: SqlRecord, tables: Sequence[str]) -> str:
    """The answer written from the rows the SQL returned (no model writes it, so no number is made up); each cell
    reads as on every surface (`core.answer.values`)."""
    source = f" (from {', '.join(tables)})" if tables else ""
    cells = result_table(record).cells()
    if len(record.rows) == 1 and len(record.columns) == 1:
        return f"{record.columns[0]}: {cells[0][0]}{source}."
    if len(record.rows) == 1:
        pairs = ", ".join(f"{c}: {v}" for c, v in zip(record.columns, cells[0], strict=False))
        return f"{pairs}{source}."
    count = f"{len(record.rows)}{'+' if record.truncated else ''} rows"
    lines = [f"{count}{source}:", " | ".join(record.columns)]
    lines += [" | ".join(row) for row in cells[:ANSWER_ROWS]]
    if len(record.rows) > ANSWER_ROWS:
        lines.append(f"… and {len(record.rows) - ANSWER_ROWS} more rows in the result.")
    return "\n".join(lines)


def no_rows(tables_used: Sequence[str], record: SqlRecord) -> str:
    where = ", ".join(tables_used) or record.database
    return (
        f"The query on {where} found no matching rows, also after looking again for the values you named, "
        "so I cannot give a number. Please check the names or values in the question, or say where to look."
    )


def sql_refused(record: SqlRecord) -> str:
    text = (record.error or "").splitlines()[0]
    if text.startswith("no permission"):
        return NO_PERMISSION
    return "I could not run a query for this: " + text


def could_not(step: str, reason: str, record: SqlRecord | None) -> GuidedAnswer:
    parts = [f"I could not finish this answer: {reason}."]
    if record is not None and record.error:
        parts.append(f"The last error: {record.error.splitlines()[0]}")
    parts.append("Please ask again, perhaps more narrowly, or name the table or value you mean.")
    return GuidedAnswer("partial", "\n".join(parts), step, step)


def ambiguity_question(databases: Sequence[tuple[str, str]]) -> str:
    """Which database the user means, in business terms: the databases and what they hold (no table names)."""
    options = [f"{name} ({summary})" if summary else name for name, summary in databases]
    joined = " or ".join(options) if len(options) == 2 else ", ".join(options[:-1]) + " or " + options[-1]
    return (
        f"This could be answered from more than one database: {joined}. Which one do you mean? "
        "Mention it in your question (for example with @database) and I will answer from it."
    )
