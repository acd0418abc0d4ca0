"""Turning what a turn did into what it says: the final answer, an honest partial answer, JSON-safe results."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.model import ResultTable, json_cell
from core.text.storable_text import storable
from workers.tools.base import SqlRecord, ToolContext


def result_table(record: SqlRecord) -> ResultTable:
    """A run_sql call of the turn as the answer carries it: JSON cells, storable text."""
    return ResultTable(
        database=record.database,
        sql=storable(record.sql),
        columns=[storable(c) for c in record.columns],
        kinds=list(record.kinds),
        rows=[[json_cell(v) for v in row] for row in record.rows],
        truncated=record.truncated,
        error=storable(user_error(record.error)) if record.error is not None else None,
    )


#: Database errors a reader understands in a few words, by what the engine's message says (SQLite, MariaDB/MySQL,
#: PostgreSQL wordings).
_ENGINE_ERRORS = (
    (re.compile(r"no such column|unknown column|column .* does not exist", re.IGNORECASE), "a column it named"),
    (re.compile(r"no such table|table .* doesn't exist|relation .* does not exist", re.IGNORECASE), "a table it named"),
)
#: Where a tool message turns to the model ("; tell the user …", "; query the tables it reads instead").
_TO_THE_MODEL = re.compile(
    r"[;(]\s*(tell the user|try |write |use |query |check |look |call |ask the user|do not )", re.IGNORECASE
)


def user_error(text: str) -> str:
    """A failed statement's error as the answer shows it to a person: one plain sentence, without what the tool
    said to the model (its hints, "tell the user …") and without driver detail (the turn's tool calls keep the
    full text for the log and the review queue). A refusal for lack of permission keeps its "no permission"
    opening but names no table."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.lower().startswith("no permission"):
        return "no permission: this query reads data you may not see."
    kind, sep, rest = first.partition(": ")
    if sep and kind.lower() in ("error", "refused", "timeout"):
        first = rest
    for pattern, named in _ENGINE_ERRORS:
        if pattern.search(first):
            return f"The query could not run: {named} does not exist."
    first = _TO_THE_MODEL.split(first, maxsplit=1)[0].strip().rstrip(";,. ")
    if kind.lower() == "timeout":
        return f"The query took too long ({first})." if first else "The query took too long."
    if not first:
        return "The query could not run."
    return f"The query could not run: {first}."


def copy_warnings(copies_used: Sequence[str]) -> list[str]:
    """What the reader is told when the turn queried copies of a live table (allowed only because they named them)."""
    if not copies_used:
        return []
    verb = "is a copy" if len(copies_used) == 1 else "are copies"
    return [f"{', '.join(copies_used)} {verb} of a live table, used on purpose."]


def partial_answer(reason: str, last_text: str, context: ToolContext) -> str:
    """What the turn found before it had to stop, said plainly; never presented as a complete answer."""
    parts = [f"I could not finish this answer: {reason}."]
    if last_text.strip():
        parts.append(f"Where I got to: {last_text.strip()}")
    if context.opened:
        parts.append("Tables I looked at: " + ", ".join(f"{d}.{t}" for d, t in sorted(context.opened)) + ".")
    good = [r for r in context.sql_runs if r.error is None]
    if good:
        last = good[-1]
        parts.append(f"The last SQL that ran on {last.database} returned {len(last.rows)} row(s): {last.sql}")
    parts.append("Please ask again, perhaps more narrowly.")
    return "\n".join(parts)


#: Numbers in an answer, as written ("4,750", "3691987750.5", "12.3"): digits with thousands separators and decimals.
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
#: Numbers below this may appear in an answer without a source ("2 tables", "the top 3").
FREE_BELOW = 10
#: How far an answer's number may be from a returned one and still be that number, rounded.
ROUNDING = 0.005


def numbers_in(text: str) -> list[float]:
    return [float(match.replace(",", "")) for match in _NUMBER.findall(text)]


def unsupported_numbers(answer: str, sources: Sequence[str]) -> list[str]:
    """The numbers of `answer` (10 or more) that appear in none of `sources` (the question and the tool results),
    exactly or rounded: the numbers a small model made up rather than read."""
    known = [n for text in sources for n in numbers_in(text)]
    missing = []
    for match in _NUMBER.findall(answer):
        value = float(match.replace(",", ""))
        if value < FREE_BELOW:
            continue
        if not any(abs(value - k) <= ROUNDING * max(abs(k), 1.0) for k in known):
            missing.append(match)
    return missing
