"""What the tools hand a hosted model in privacy mode ("schema_only", `core.access.privacy`): structure, no values.

Each tool calls these when its turn runs in privacy mode (`ToolContext.schema_only`); the user's answer still gets
every row. What is left out, and why the rest is safe:

- **Cards and search candidates** keep names, types, keys, joins, comments written in the schema, row counts,
  null shares and distinct counts (figures about a column, not its values). A column comment that analysis read a
  code list from ("10=ordered, 20=paid") is left out, and quoted text in any comment becomes "…"; an unquoted value
  in a comment cannot be told from other words and is sent as written. Ranges, frequent values, samples, the
  value index's copy, codes and their meanings are left out; a coded column says only which table explains its
  codes (the code group is a row of that table, so it is not named). A column to watch keeps its reason without
  the values a soft-delete flag quotes.
- **Notes** are text people wrote about the data and often quote it ("status C means cancelled"); a quote can be
  spotted, an unquoted code cannot, so their text is withheld and the model reads how many there are.
- **Value-index hits** (which column holds a value the question names) are left out.
- **SQL results** become their shape: the columns with what each holds (count, amount, date, …), and how many rows
  in words (none, one, several, more than the cap), since that is what writing the next statement needs: whether
  the statement ran, matched nothing, or must aggregate instead of listing. A single row of nothing but NULL and
  zero is said to have matched nothing.
- **SQL errors** keep what the engine said about the statement, with any quoted text or number the statement does
  not itself hold replaced by "…": an engine may quote the value it failed on ("invalid input syntax for type
  integer: "Bukhan Foods"").
- **The row filters and masks that applied** are named without their conditions, which an operator may have
  written with values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.answer.values import ValueKind

#: What a model reads in place of values, and where the user reads them.
WITHHELD = "values withheld: privacy mode"
#: The first line of every SQL result the model reads in privacy mode.
RESULT_LEAD = "ok: the statement ran; its rows go to the user, not to you (privacy mode)."
#: Column statistics that describe a column without quoting a value of it.
_SHAPE_STATS = ("null_ratio", "distinct", "avg_length", "negative_share", "date_text_format")
#: Column entries that hold values (or say which values a code table has).
_VALUE_ENTRIES = (
    "frequent",
    "values",
    "codes",
    "codes_from",
    "codes_label",
    "codes_source",
    "codes_group",
    "codes_group_from",
)
_SOFT_DELETE = re.compile(r"^(?P<lead>soft-delete/active flag)\s*\([^)]*\)", re.IGNORECASE)
_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`[^`]*`")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*")
_WATCH_LINE = "Columns to watch: "


def watch_without_values(reason: str) -> str:
    """A column-to-watch reason without the values it quotes (a soft-delete flag's values, anything in quotes)."""
    text = _SOFT_DELETE.sub(r"\g<lead>", reason)
    return _QUOTED.sub("…", text)


def _code_table(column: dict[str, Any]) -> str | None:
    """The table that explains a coded column's codes, without the code group (a row of that table)."""
    source = column.get("codes_source")
    if not source or source == "column comment":
        return None
    return str(source).split(" group ", 1)[0]


def comment_without_values(comment: str | None) -> str | None:
    """A schema comment with its quoted text (`'N' = deleted`, `"Busan"`) replaced by "…"."""
    return _QUOTED.sub("…", comment) if comment else comment


def _column(column: dict[str, Any]) -> dict[str, Any]:
    shown = {k: v for k, v in column.items() if k not in _VALUE_ENTRIES and k != "stats" and k != "watch"}
    if column.get("comment"):
        listed_codes = column.get("codes_source") == "column comment"
        shown["comment"] = (
            f"lists the column's codes ({WITHHELD})" if listed_codes else comment_without_values(str(column["comment"]))
        )
    stats = column.get("stats")
    if isinstance(stats, dict):
        shown["stats"] = {k: v for k, v in stats.items() if k in _SHAPE_STATS}
    reasons = [watch_without_values(str(column["watch"]))] if column.get("watch") else []
    if column.get("codes"):
        table = _code_table(column)
        reasons.append(f"holds codes{f' explained in {table}' if table else ''} ({WITHHELD})")
    if reasons:
        shown["watch"] = "; ".join(reasons)
    return shown


def card_without_values(card: dict[str, Any]) -> dict[str, Any]:
    """A card (as the reader may see it) with no value of the table's rows in it (module doc)."""
    shown = dict(card)
    shown["columns"] = [_column(c) for c in card.get("columns") or [] if isinstance(c, dict)]
    shown["sample"] = None
    for key in ("comment", "purpose"):
        if isinstance(card.get(key), str):
            shown[key] = comment_without_values(card[key])
    if isinstance(card.get("watch"), dict):
        shown["watch"] = {k: watch_without_values(str(v)) for k, v in card["watch"].items()}
    return shown


def head_without_values(head: str, watch: dict[str, str]) -> str:
    """A search candidate's head (`core.cards.card_head.header_lines` as text) with its columns to watch said
    without values."""
    lines = head.splitlines()
    kept = [comment_without_values(line) or line for line in lines if not line.startswith(_WATCH_LINE)]
    if len(kept) < len(lines) and watch:
        kept.append(_WATCH_LINE + "; ".join(f"{k}: {watch_without_values(v)}" for k, v in watch.items()))
    return "\n".join(kept)


def notes_withheld(count: int) -> str:
    """What the model reads of `count` notes from users."""
    plural = "note" if count == 1 else "notes"
    return f"{count} {plural} from users (text withheld: privacy mode; notes often quote values)"


def _rows(rows: Sequence[Sequence[Any]], truncated: bool) -> str:
    if truncated:
        return "more rows than the row cap: the list was cut; aggregate with COUNT/SUM/GROUP BY in SQL"
    if not rows:
        return "none: nothing matched"
    if len(rows) == 1:
        if all(v is None or (isinstance(v, int | float) and not isinstance(v, bool) and v == 0) for v in rows[0]):
            return "one, holding only NULL or 0: nothing matched"
        return "one"
    return "several"


def result_shape(
    columns: Sequence[str], kinds: Sequence[ValueKind | None], rows: Sequence[Sequence[Any]], truncated: bool
) -> str:
    """A successful SQL result as the model reads it in privacy mode: its columns, their kinds, and the number of
    rows in words (module doc)."""
    described = []
    for index, name in enumerate(columns):
        kind = kinds[index] if index < len(kinds) else None
        described.append(f"{name} ({kind.value})" if kind is not None else name)
    return "\n".join(
        [
            RESULT_LEAD,
            "Columns: " + (", ".join(described) or "none"),
            f"Rows: {_rows(rows, truncated)}.",
            "Do not guess values or numbers: tablescout writes them into the answer from the rows.",
        ]
    )


def error_without_values(error: str, sql: str) -> str:
    """An SQL error with the quoted text and numbers that `sql` does not hold replaced by "…"."""

    def quoted(match: re.Match[str]) -> str:
        return match.group(0) if match.group(0)[1:-1] in sql else "…"

    def number(match: re.Match[str]) -> str:
        return match.group(0) if match.group(0) in sql else "…"

    return _NUMBER.sub(number, _QUOTED.sub(quoted, error))


POLICIES_APPLIED = "(row filters or column masks applied for this user; totals cover only what this user may see)"
