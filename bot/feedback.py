"""👍/👎 on answers, for every chat surface: a click is stored per turn and user (last click wins), a 👎 may get a
reason, and a 👍 from the person who asked, on an answer whose SQL ran, proposes that SQL as a verified example
for an admin to review (`tablescout examples`). The chat adapters find the turn from the answer message they were
clicked on; nothing in a click payload names a turn directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from core.store.models import Turn
from core.store.repositories import feedback as feedback_repo

RATINGS = frozenset({"good", "bad"})
REASON_LIMIT = 2000  # characters of a 👎 reason that are kept


@dataclass(frozen=True)
class Clicked:
    """What a click did: the turn it rated, and the example it proposed (None when it proposed none)."""

    turn_id: int
    rating: str
    example_id: int | None = None


def answer_clicked(
    session: Session, *, platform: str, channel_id: str, message_id: str, user_id: str, rating: str
) -> Clicked | None:
    """Record `user_id`'s `rating` of the answer `message_id`; None when the message is no answer of ours or the
    rating is unknown."""
    if rating not in RATINGS or not user_id:
        return None
    turn = feedback_repo.turn_for_message(session, platform, channel_id, message_id)
    if turn is None:
        return None
    feedback_repo.record(session, turn.id, platform, user_id, rating)
    example_id = None
    if rating == "good" and turn.user_platform == platform and turn.user_id == user_id:
        example_id = propose_example(session, turn)
    return Clicked(turn.id, rating, example_id)


def reason_given(session: Session, *, turn_id: int, platform: str, user_id: str, reason: str) -> bool:
    """Attach `reason` to the user's 👎 of the turn; False when they have none (or the reason is empty)."""
    text = reason.strip()[:REASON_LIMIT]
    return bool(text) and feedback_repo.set_reason(session, turn_id, platform, user_id, text)


def propose_example(session: Session, turn: Turn) -> int | None:
    """The turn's last successful SQL as a proposed example (once per turn); None when no SQL of it ran."""
    existing = feedback_repo.example_for_turn(session, turn.id)
    if existing is not None:
        return existing.id
    run = _last_successful_run(turn.result or {})
    if run is None:
        return None
    database = str(run["database"])
    prefix = database + "."
    tables = [t[len(prefix) :] for t in turn.tables_used or [] if t.startswith(prefix)]
    if not tables:
        return None
    example = feedback_repo.add_example(
        session,
        turn_id=turn.id,
        question=turn.question,
        database=database,
        sql=str(run["sql"]),
        tables=tables,
        platform=turn.user_platform,
        user_id=turn.user_id,
    )
    return example.id


def _last_successful_run(result: dict[str, Any]) -> dict[str, Any] | None:
    for run in reversed(result.get("sql") or []):
        if isinstance(run, dict) and not run.get("error") and run.get("sql") and run.get("database"):
            return run
    return None
