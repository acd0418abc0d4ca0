"""The rewrites of a guided SQL call's statement before it runs, each a reading with one sure answer: joins the
question does not need left out (`workers.turns.join_pruning`), columns moved to the table that has them and short
aliases completed (`workers.turns.column_qualifiers`), code lookups by a guessed name replaced by the code the
question names (`workers.turns.code_lookups`). The statement the user sees is the one that ran; the trace keeps
each statement before its rewrite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workers.sql.guard import dialect_for
from workers.turns.code_lookups import codes_looked_up
from workers.turns.column_qualifiers import requalified
from workers.turns.guided_sql import shown_tables
from workers.turns.join_pruning import without_unneeded_joins
from workers.turns.selection import Selection


def fixed_statement(sql: str, asked: str, selection: Selection, trace: dict[str, Any]) -> str:
    """`sql` with every sure rewrite made; `asked`: the question with the conversation's earlier question, if any.
    Each rewrite that changed the statement records the statement before it in `trace` ("pruned", "requalified",
    "codes"; a join left out after the columns moved records the statement as they left it)."""
    dialect = dialect_for(selection.engine)
    shown = shown_tables(selection)
    cards = {t.name.upper(): t.card for t in selection.tables}

    def pruned(statement: str) -> str:
        return without_unneeded_joins(statement, dialect, asked, shown)

    # pruning again after the columns moved: a column of the kept table written with the joined table's alias
    # ("T2.Template_Type_Description") keeps the join from being read as unneeded until it is moved
    steps: list[tuple[str, Callable[[str], str]]] = [
        ("pruned", pruned),
        ("requalified", lambda s: requalified(s, dialect, shown)),
        ("pruned", pruned),
        ("codes", lambda s: codes_looked_up(s, dialect, asked, cards)),
    ]
    for name, step in steps:
        rewritten = step(sql)
        if rewritten != sql:
            trace[name] = sql
            sql = rewritten
    return sql
