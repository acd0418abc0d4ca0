"""A turn in privacy mode (`core.access.privacy`): whether it is one, its answer, and its thread history.

A turn is in privacy mode when its model is hosted and any source its asker may query is under "schema_only". The
model then writes SQL from cards without values and reads each result's shape only (`workers.tools.privacy`), so
the answer's numbers cannot come from it: the first line is composed here from the last result's rows, in the
question's words (`workers.turns.sentences`, the sentence the guided path writes), followed by what the model
said about its query when that names no number the rows or the question do not hold. A line under the answer
(one of its warnings) says privacy mode is on.

Earlier answers of the thread quote values (they were written from rows), so in privacy mode the model reads, in
place of each, which tables it used and its SQL with every literal that may be a value replaced by `?`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from core.access.privacy import hosted, schema_only
from core.answer.model import Answer
from core.config.file import ConfigFile
from workers.sql.guard import dialect_for
from workers.tools.base import ToolContext
from workers.turns.answers import result_table, unsupported_numbers
from workers.turns.sentences import answer_sentence

#: The line under every answer of a turn in privacy mode.
PRIVACY_NOTE = (
    "Privacy mode is on: the model read the tables' structure, not their data; "
    "the numbers and values shown come straight from the query results."
)
NO_ROWS = "The query found no matching rows."
#: What the model reads in place of an earlier answer.
EARLIER_WITHHELD = "(earlier answer withheld: privacy mode)"
#: Where the note of the row filters and masks that applied starts in an answer's SQL (`sql_tool.shown_sql`).
_POLICY_NOTE = "\n-- for you:"


def turn_is_private(config: ConfigFile, model_label: str, databases: Sequence[str]) -> bool:
    """Privacy mode for a turn whose asker may query `databases`, answered by the model of `model_label`."""
    return hosted(model_label) and schema_only(config, databases)


def private_answer(question: str, model_text: str, context: ToolContext) -> str:
    """The answer of a question turn in privacy mode (module doc)."""
    done = [r for r in context.sql_runs if r.error is None]
    parts: list[str] = []
    sources = [question]
    if done:
        table = result_table(done[-1])
        parts.append((answer_sentence(question, table) or NO_ROWS) if table.rows else NO_ROWS)
        sources += [cell for row in table.cells() for cell in row]
    said = model_text.strip()
    if said and not (done and unsupported_numbers(said, sources)):
        parts.append(said)
    return "\n".join(parts) or NO_ROWS


def sql_without_literals(sql: str, engine: str) -> str | None:
    """`sql` with every literal that may be a value written as `?`, and no comments; None when it does not
    parse."""
    statement = sql.split(_POLICY_NOTE, 1)[0]
    try:
        tree = parse_one(statement, read=dialect_for(engine))
    except (SqlglotError, ValueError, RecursionError):
        return None
    if tree is None:
        return None
    bare = tree.transform(lambda node: exp.Placeholder() if _a_value(node) else node)
    return bare.sql(dialect=dialect_for(engine), comments=False)


def _a_value(node: exp.Expression) -> bool:
    """A literal that may be a value of the data: not a column position (ORDER BY 2, GROUP BY 1) nor a row count
    (LIMIT 10, OFFSET 20)."""
    if not isinstance(node, exp.Literal):
        return False
    if node.is_string:
        return True
    return not isinstance(node.parent, exp.Ordered | exp.Group | exp.Limit | exp.Offset)


def earlier_answer(stored: object, engine_of: Callable[[str], str | None]) -> str:
    """An earlier answer of the thread as the model reads it in privacy mode: the tables it used and its SQL
    without literals (`engine_of`: a database's engine, by name; None for one that is gone)."""
    answer = Answer.from_stored(stored)
    lines = [EARLIER_WITHHELD]
    if answer.tables_used:
        lines.append("It used: " + ", ".join(answer.tables_used))
    for result in answer.results:
        engine = engine_of(result.database)
        shown = sql_without_literals(result.sql, engine) if engine is not None else None
        if shown is not None:
            lines.append(f"SQL on {result.database}: {shown}")
    return "\n".join(lines)
