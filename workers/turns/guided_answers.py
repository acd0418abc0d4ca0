"""What the guided path says when it ends (SPEC §4): the answer written from the rows, and the plain sentences for
a question it could not answer (no permission, nothing found, no rows, an SQL error, more than one database)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.answer.model import Status
from workers.tools.base import SqlRecord
from workers.turns.answer_checks import tables_read
from workers.turns.answers import result_table, user_error
from workers.turns.result_codes import Meanings
from workers.turns.sentences import answer_sentence


@dataclass
class GuidedAnswer:
    status: Status  # "answered"; "partial" when a doubt is said, or no figure came back
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


def rows_answer(question: str, record: SqlRecord, tables: Sequence[str], meanings: Meanings | None = None) -> str:
    """The answer written from the rows the SQL returned (no model writes it, so no number is made up): a sentence
    in the question's words (`workers.turns.sentences`), then where it came from; the rows themselves are the
    answer's result table, which every surface shows below the text. `meanings`: what the codes of the result's
    columns mean (`workers.turns.result_codes`)."""
    sentence = answer_sentence(question, result_table(record), meanings)
    read = {name.upper() for name in tables_read(record.sql, None)}
    answered_from = [t for t in tables if t.rsplit(".", 1)[-1].upper() in read] or tables  # not a join left out
    source = f"From {', '.join(answered_from)}." if answered_from else ""
    return "\n".join(part for part in (sentence, source) if part)


#: Today's date in a statement (SQLite's 'now', the SQL standard's and the engines' own functions).
_TODAY = re.compile(r"'now'|\b(current_date|current_timestamp|now\s*\(|getdate\s*\(|sysdate|curdate\s*\()", re.I)


def no_rows(tables_used: Sequence[str], record: SqlRecord) -> str:
    where = ", ".join(tables_used) or record.database
    text = (
        f"The query on {where} found no matching rows, also after looking again for the values you named, "
        "so I cannot give a number. Please check the names or values in the question, or say where to look."
    )
    if _TODAY.search(record.sql):  # "last year" read from today, on data that may end before it
        text += " It counted back from today's date: if the data ends earlier, name the period you mean (a year)."
    return text


def sql_refused(record: SqlRecord) -> str:
    text = (record.error or "").splitlines()[0]
    if text.startswith("no permission"):
        return NO_PERMISSION
    return "I could not run a query for this: " + text


def could_not(step: str, reason: str, record: SqlRecord | None) -> GuidedAnswer:
    parts = [f"I could not finish this answer: {reason}."]
    if record is not None and record.error:
        parts.append(f"The last error: {user_error(record.error)}")
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
