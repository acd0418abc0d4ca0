"""A turn's rounds as the loop (`workers.turns.engine`) and the guided path (`workers.turns.guided`) both record
them: each model call counted on the turn, and stored as one `Round` row with the next ordinal."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from sqlalchemy.orm import Session

from core.store.models import Round
from core.store.repositories import turns as turn_repo
from workers.models.types import ModelReply


class CountedRun(Protocol):
    """What a turn's state holds of its rounds (`state.TurnRun`)."""

    turn_id: int
    rounds: int
    input_tokens: int
    output_tokens: int
    last_text: str
    next_ordinal: int | None


def count_reply(run: CountedRun, reply: ModelReply) -> None:
    """One more model call on the turn: its round, its tokens, and its text when it wrote one."""
    run.rounds += 1
    run.input_tokens += reply.usage.input_tokens
    run.output_tokens += reply.usage.output_tokens
    if reply.text.strip():
        run.last_text = reply.text


def add_round(
    session: Session, run: CountedRun, model: str, started: datetime, reply: ModelReply, *, finished: bool
) -> Round:
    """The round row of `reply`, with the turn's next ordinal: a first attempt starts at 1 without asking the store, a
    later one reads where the earlier attempts stopped, once. Added to `session`, not flushed: a round without tool
    calls is inserted finished, at commit; one with tool calls is flushed by the caller when they need its id."""
    if run.next_ordinal is None:
        run.next_ordinal = turn_repo.next_round_ordinal(session, run.turn_id)
    row = Round(
        turn_id=run.turn_id,
        ordinal=run.next_ordinal,
        model=model,
        started_at=started,
        stop_reason=reply.stop_reason,
        text=reply.text or None,
        input_tokens=reply.usage.input_tokens,
        output_tokens=reply.usage.output_tokens,
        finished_at=turn_repo.now() if finished else None,
    )
    session.add(row)
    run.next_ordinal += 1
    return row
