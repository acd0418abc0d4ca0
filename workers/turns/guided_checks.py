"""The guided path's last step before an answer goes out (SPEC §4): the statement that ran, checked against the
question (`workers.turns.answer_checks`), repaired once, and what is still in doubt said to the user.

1. Literals the column holds in another spelling, case or script, and codes the question names by their meaning,
   are rewritten and the statement runs again, without a model call; the answer says what was read as what.
   A grouping of aggregates alone that the question does not ask for is dropped the same way, and
   date functions on periods written as digits (`202401`) read the digits instead.
   A filter whose only doubt is that the question does not ask for it (a code or identifier it does not name) is
   left out the same way.
2. What else is wrong (the shape, a code or value the question does not name, one day for a period, a copy not asked
   for) goes to one repair call as a hint, with the tables it needs added to the schema (the live table of a copy,
   the table holding the question's value). The repaired statement is kept when it has fewer doubts.
3. A doubt that remains is said plainly in one line, and the answer is `partial`.
An empty result whose join matched nothing and only filtered runs again without that join, checked the same way
(`without_join`, `workers.turns.join_drops`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from workers.tools.base import SqlRecord
from workers.turns.answer_checks import Doubt, Rewrite, Verdict, parse
from workers.turns.guided_sql import is_empty
from workers.turns.join_drops import DroppedJoin
from workers.turns.selection import Selection

#: Said when a grouping the question did not ask for was dropped (`question_shape.ungrouped`).
UNGROUPED = "I left out the query's grouping: the question asks for one figure over all the rows."


@dataclass(frozen=True)
class CheckSteps:
    """What the checks need from the guided path: the verdict on a record (its probes in a transaction of their
    own), a statement run without a model call, one SQL call with a hint, and the selection with tables added."""

    verdict: Callable[[SqlRecord, Selection], Verdict]
    rerun: Callable[[str, Selection], SqlRecord | None]
    write: Callable[[Selection, str], SqlRecord | None]
    grow: Callable[[Selection, Sequence[str]], Selection]


@dataclass
class Checked:
    record: SqlRecord
    doubts: list[Doubt] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # literals read as the data writes them
    repaired: bool = False  # a repair call was made
    kinds: list[str] = field(default_factory=list)  # the kinds of doubt first found, for the turn's trace


def checked(record: SqlRecord, selection: Selection, dialect: str | None, steps: CheckSteps) -> Checked:
    """`record` (a statement that ran without error) checked, rewritten or repaired once (module doc)."""
    verdict = steps.verdict(record, selection)
    kinds = {d.kind for d in verdict.doubts} | ({"rewrite"} if verdict.rewrites else set())
    result = Checked(record, kinds=sorted(kinds))
    if verdict.rewrites:
        again = _rewritten(record, selection, dialect, verdict, steps)
        if again is not None:
            result.notes = [r.note for r in verdict.rewrites]
            result.record = again
            verdict = steps.verdict(again, selection)
    if verdict.ungrouped is not None:  # the reading the question asks for: kept unless it adds doubts
        verdict = _restated(result, verdict, verdict.ungrouped, UNGROUPED, selection, steps, equal_kept=True)
    if verdict.redated is not None:
        verdict = _restated(result, verdict, verdict.redated.sql, verdict.redated.note, selection, steps)
    if verdict.unfiltered is not None:
        verdict = _restated(result, verdict, verdict.unfiltered.sql, verdict.unfiltered.note, selection, steps)
    result.doubts = verdict.doubts
    if not verdict.doubts or is_empty(result.record):
        return result  # an empty result is searched again by the caller, with the values it filtered on
    hint = (
        f"An earlier query:\n{result.record.sql}\ndoes not answer the question:\n- "
        + "\n- ".join(d.hint for d in verdict.doubts)
        + "\nWrite a query that does."
    )
    grown = steps.grow(selection, [d.table for d in verdict.doubts if d.table])
    result.repaired = True
    repaired = steps.write(grown, hint)
    if repaired is None or repaired.error is not None or is_empty(repaired):
        return result
    second = steps.verdict(repaired, grown)
    notes = []
    if second.rewrites:
        again = _rewritten(repaired, grown, dialect, second, steps)
        if again is not None:
            notes = [r.note for r in second.rewrites]
            repaired, second = again, steps.verdict(again, grown)
    if len(second.doubts) < len(verdict.doubts):
        result.record, result.doubts, result.notes = repaired, second.doubts, notes
    return result


def without_join(
    question: str, dropped: DroppedJoin, selection: Selection, dialect: str | None, steps: CheckSteps
) -> Checked | None:
    """The statement that returned no rows run again without a join that matched nothing (`dropped`), checked as
    any other; None when it fails or has no rows either. What was left out is said: as a doubt (status `partial`)
    when a filter left out with it compares with a value the question names, else as a note."""
    again = steps.rerun(dropped.sql, selection)
    if again is None or again.error is not None or is_empty(again):
        return None
    result = checked(again, selection, dialect, steps)
    if is_empty(result.record):
        return None
    if dropped.asked(question):
        result.doubts.insert(0, Doubt("join", dropped.note(), ""))
    else:
        result.notes.insert(0, dropped.note())
    return result


def _restated(
    result: Checked,
    verdict: Verdict,
    sql: str,
    note: str,
    selection: Selection,
    steps: CheckSteps,
    equal_kept: bool = False,
) -> Verdict:
    """Run `sql` (a rewrite of the result's statement) without a model call; when it has rows and fewer doubts (or
    no more, with `equal_kept`), it becomes the result, with `note` said. The verdict of the result kept."""
    again = steps.rerun(sql, selection)
    if again is None or again.error is not None or is_empty(again):
        return verdict
    after = steps.verdict(again, selection)
    if len(after.doubts) < len(verdict.doubts) or (equal_kept and len(after.doubts) <= len(verdict.doubts)):
        result.record = again
        result.notes.append(note)
        return after
    return verdict


def _rewritten(
    record: SqlRecord, selection: Selection, dialect: str | None, verdict: Verdict, steps: CheckSteps
) -> SqlRecord | None:
    sql = rewrite(record.sql, dialect, verdict.rewrites)
    if sql == record.sql:
        return None
    again = steps.rerun(sql, selection)
    return again if again is not None and again.error is None else None


def doubt_line(doubts: Sequence[Doubt]) -> str:
    """The one line that tells the user what to doubt (the first doubt; the others are in the turn's trace)."""
    return doubts[0].say if doubts else ""


def rewrite(sql: str, dialect: str | None, rewrites: Sequence[Rewrite]) -> str:
    """`sql` with each rewritten literal replaced by its value (as a string literal, in LIKE patterns too)."""
    tree = parse(sql, dialect)
    if tree is None or not rewrites:
        return sql
    swap = {r.literal: r.value for r in rewrites}

    def replace(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Literal) and node.is_string:
            text = node.this
            if text in swap:
                return exp.Literal.string(swap[text])
            core = text.strip("%_ ")
            if core in swap and core != text:
                return exp.Literal.string(text.replace(core, swap[core]))
        return node

    return tree.transform(replace).sql(dialect=dialect)
