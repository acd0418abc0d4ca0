"""Candidates chosen by execution agreement (SPEC §4, guided path).

A small model's most likely statement is its best single guess, not a sure one. When it ran, more statements are
sampled for the same prompt (the server's prompt cache holds it, so each costs only its own tokens) and run, and the
result most of them agree on is the answer:
1. The first candidate is the model's most likely statement (temperature 0); the next are sampled with the
   service's own sampling. Sampling stops as soon as two candidates agree, so a question the model is sure of costs
   one more call, and a split one at most `TABLESCOUT_GUIDED_CANDIDATES` calls in all (3 by default; 1 writes the
   most likely statement only).
2. Two candidates agree when they return the same rows in any order (numbers compared to nine significant digits,
   column names ignored): different SQL that means the same thing agrees.
3. A result with rows beats an empty one (an empty result is searched again with the values it filtered on), then
   the result more candidates returned, then the model's most likely statement (the first).
4. When no two candidates agree and another one returned rows of its own, the answer says so in one line: the
   figure may be wrong, and the user reads the other figure when it is one value.
A candidate whose statement failed counts as written, not as a vote.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from workers.models.types import ModelError
from workers.tools.base import SqlRecord, ToolContext
from workers.turns.answer_checks import Doubt
from workers.turns.answers import result_table
from workers.turns.guided_run import OutOfTime
from workers.turns.guided_sql import is_empty

log = logging.getLogger(__name__)

#: Significant digits to which two numbers in results are the same number (a float summed in another order).
DIGITS = 9


@dataclass(frozen=True)
class Used:
    """The tables a turn has read so far (`ToolContext.tables_used` and what goes with it): each candidate's run
    starts from the same, and the answer keeps the chosen candidate's."""

    tables: tuple[str, ...]
    ids: tuple[tuple[str, int], ...]
    copies: tuple[str, ...]

    @classmethod
    def of(cls, context: ToolContext) -> Used:
        return cls(tuple(context.tables_used), tuple(context.used_table_ids.items()), tuple(context.copies_used))

    def restore(self, context: ToolContext) -> None:
        context.tables_used = list(self.tables)
        context.used_table_ids = dict(self.ids)
        context.copies_used = list(self.copies)


@dataclass(frozen=True)
class Agreement:
    """The candidate chosen (`record`), how many statements were written, and how many of those that ran returned
    its result (`agreeing`); `other`: a result with rows that no other candidate returned, when the choice was a
    split (None otherwise)."""

    record: SqlRecord
    written: int
    agreeing: int
    other: SqlRecord | None = None
    first: bool = True  # the chosen candidate is the model's most likely statement (or returned its result)

    def trace(self) -> dict[str, int]:
        return {"written": self.written, "agreeing": self.agreeing, "first": int(self.first)}

    def doubt(self) -> Doubt | None:
        """The line the answer carries when the candidates split (module doc, 4)."""
        if self.other is None:
            return None
        cells = result_table(self.other).cells()
        alternative = f" (another gave {cells[0][0]})" if len(cells) == 1 and len(cells[0]) == 1 else ""
        say = (
            "I am not sure of this figure: the queries I wrote for this question disagree"
            f"{alternative}. Say more about what you mean if it looks wrong."
        )
        hint = "Other queries for this question returned different results."
        return Doubt("agreement", say, hint)


def agreed(first: SqlRecord, write: Callable[[], SqlRecord | None], most: int) -> Agreement:
    """`first` (a statement that ran) and more candidates written by `write`, the chosen one by execution agreement
    (module doc). A model call that fails or finds no time left ends the sampling: the candidates so far decide."""
    written: list[SqlRecord | None] = [first]
    while len(written) < most and not _settled(written):
        try:
            written.append(write())
        except OutOfTime:
            break
        except ModelError as exc:  # the log has why no other candidate was written
            log.warning("no further SQL candidate: %s", exc)
            break
    return choose(first, written)


def choose(first: SqlRecord, written: Sequence[SqlRecord | None]) -> Agreement:
    """The candidate whose result wins (module doc, 3), among `written` (None: a candidate that wrote no SQL)."""
    groups: dict[Any, list[SqlRecord]] = {}
    for record in written:
        if record is not None and record.error is None:
            groups.setdefault(result_key(record), []).append(record)
    if not groups:
        return Agreement(first, len(written), 0)

    def rank(members: list[SqlRecord]) -> tuple[bool, int, bool]:
        return (not is_empty(members[0]), len(members), any(m is first for m in members))

    ordered = sorted(groups.values(), key=rank, reverse=True)
    best = ordered[0]
    chosen = next((m for m in best if m is first), best[0])
    others = [g[0] for g in ordered[1:] if not is_empty(g[0])]
    split = len(best) == 1 and bool(others)
    return Agreement(chosen, len(written), len(best), others[0] if split else None, any(m is first for m in best))


def _settled(written: Sequence[SqlRecord | None]) -> bool:
    """Whether two candidates that ran agree already."""
    keys = [result_key(r) for r in written if r is not None and r.error is None]
    return len(keys) != len(set(keys))


def result_key(record: SqlRecord) -> tuple[int, tuple[str, ...]]:
    """What two results that agree share: the width and the rows as a sorted multiset of normalised cells."""
    rows = sorted(repr(tuple(_cell(v) for v in row)) for row in record.rows)
    return len(record.columns), tuple(rows)


def _cell(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float | Decimal):
        number = float(value)
        return float(f"{number:.{DIGITS}g}") if number == number else "nan"
    if isinstance(value, str):
        return value.strip()
    return str(value)
