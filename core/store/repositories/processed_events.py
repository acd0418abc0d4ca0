"""Chat events seen (`processed_events`): the deduplication of platform redeliveries (bot/intake.py).

An event is recorded in the transaction that stores its turn, so a redelivery of a stored event finds it, and a
redelivery of one whose transaction failed is taken as the first delivery.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from core.store.models import ProcessedEvent


def first_seen(session: Session, platform: str, event_id: str) -> bool:
    """Record the event; True when this is its first record, False when it was recorded before (left as it was)."""
    inserted = session.execute(
        insert(ProcessedEvent)
        .values(platform=platform, event_id=event_id)
        .on_conflict_do_nothing(index_elements=["platform", "event_id"])
        .returning(ProcessedEvent.event_id)
    ).first()
    return inserted is not None


def turn_of(session: Session, platform: str, event_id: str) -> int | None:
    """The turn a recorded event became (None when it became none, or is not recorded)."""
    return session.scalar(
        select(ProcessedEvent.turn_id).where(ProcessedEvent.platform == platform, ProcessedEvent.event_id == event_id)
    )


def link_turn(session: Session, platform: str, event_id: str, turn_id: int) -> None:
    """Note that the recorded event became turn `turn_id`."""
    session.execute(
        update(ProcessedEvent)
        .where(ProcessedEvent.platform == platform, ProcessedEvent.event_id == event_id)
        .values(turn_id=turn_id)
    )
