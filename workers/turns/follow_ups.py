"""Follow-ups that need no new SQL: "as a chart", "as a table", "as a bar chart" re-present the thread's last result.

The user's previous answered turn in the same thread is shown again, drawn or tabled as asked, without a model call
or a query: its rows are the ones the user already saw. Only the user's own earlier answer is reused, and only while
every table it read is still visible to them; with none such, and for anything else ("by week instead", "only
Busan"), which changes the SQL, the message goes to the model with the thread's history like any question.

A message is a presentation follow-up only when that is all it says (English or Korean), so "show the orders by
month as a chart" is a new question, answered (and charted) in full.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.access.users import UserRef
from core.answer.model import Answer, Chart, ChartType
from core.store.models import Turn
from core.store.repositories import turns as turn_repo

Presentation = Literal["chart", "table"]

_POLITE = r"(?:(?:please|pls|can you|could you|would you|now|ok|okay|then|and)[\s,]+)*"
_SHOW = r"(?:(?:show|draw|plot|make|give|put|display|turn|render|present)\s+(?:me\s+)?)?"
_THAT = r"(?:(?:it|that|this|them|those|these|the (?:result|results|numbers|data|answer))\s+)?"
_ENGLISH = re.compile(
    rf"^{_POLITE}{_SHOW}{_THAT}(?:as|in|into|on)\s+(?:a\s+)?(?P<kind>bar|line|column)?\s*"
    rf"(?P<what>chart|graph|plot|table)(?:\s+(?:instead|please))*$"
    rf"|^{_POLITE}(?P<verb>chart|graph|plot|tabulate)\s+(?:it|that|this|them)(?:\s+(?:instead|please))*$",
    re.IGNORECASE,
)
_KOREAN = re.compile(
    r"^(?:(?:그걸|그것을|이걸|이것을|결과를)\s*)?(?P<kind>막대|선)?\s*(?P<what>차트|그래프|표|테이블)로\s*"
    r"(?:보여\s*(?:줘|주세요|주실래요)|그려\s*(?:줘|주세요)|바꿔\s*(?:줘|주세요)|줘|주세요)?$"
)
_KINDS: dict[str, ChartType] = {"bar": "bar", "column": "bar", "line": "line", "막대": "bar", "선": "line"}


@dataclass(frozen=True)
class PresentationRequest:
    """What the follow-up asks for: a chart (of this type, or the result's own when None) or a table."""

    presentation: Presentation
    chart_type: ChartType | None = None


def presentation_asked(question: str) -> PresentationRequest | None:
    """The re-presentation `question` asks for when that is all it asks, else None."""
    text = " ".join(question.strip().rstrip(".!?。 ").split())
    match = _ENGLISH.match(text) or _KOREAN.match(text)
    if match is None:
        return None
    groups = match.groupdict()
    what = (groups.get("what") or groups.get("verb") or "").lower()
    if what in ("table", "tabulate", "표", "테이블"):
        return PresentationRequest("table")
    kind = groups.get("kind")
    return PresentationRequest("chart", _KINDS.get(kind.lower()) if kind else None)


def reusable_answer(session: Session, principal: Principal, turn: Turn, asker: UserRef) -> Answer | None:
    """The asker's last answered turn in this thread with a result, while every table it read is still visible to
    them; None when there is none (someone else's answer is never reused: its rows were filtered for them)."""
    for earlier in reversed(turn_repo.earlier_turns(session, turn.conversation_id, turn.id)):
        if UserRef(earlier.user_platform, earlier.user_id) != asker or earlier.intent != "question":
            continue
        answer = turn_repo.answer_of(earlier)
        if answer.status != "answered" or not any(r.succeeded and r.rows for r in answer.results):
            continue
        return answer if all(_visible(principal, qualified) for qualified in answer.tables_used) else None
    return None


def _visible(principal: Principal, qualified: str) -> bool:
    database, _, table = qualified.partition(".")
    schema, _, name = table.rpartition(".")
    return principal.may_see(database, name or table, schema or None)


def first_sentence(text: str) -> str:
    """The answer's first line (its sentence), without the lines that followed it."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


NOT_CHARTABLE = (
    "That result does not make a chart: a chart needs 2 to 60 rows, one column to label them and one or two "
    "columns of numbers. Here it is as a table."
)


def shown_again(previous: Answer, request: PresentationRequest, chart: Chart | None) -> Answer:
    """The earlier answer re-presented: its sentence, results, tables and notes, with `chart` (drawn by the caller
    for a chart request) or none (a table, or a result that makes no chart, said so)."""
    sentence = first_sentence(previous.text)
    if request.presentation == "chart" and chart is None:
        sentence = f"{sentence}\n{NOT_CHARTABLE}" if sentence else NOT_CHARTABLE
    return Answer(
        status="answered",
        text=sentence or "Here is the last result again.",
        tables_used=list(previous.tables_used),
        copies_used=list(previous.copies_used),
        results=list(previous.results),
        chart=chart if request.presentation == "chart" else None,
        warnings=list(previous.warnings),
        sources_note=previous.sources_note,
    )
