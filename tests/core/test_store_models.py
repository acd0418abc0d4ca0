from __future__ import annotations

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.store.models import (
    Conversation,
    Note,
    NoteTable,
    OutboxMessage,
    ProcessedEvent,
    SearchChunk,
    Source,
    SourceTable,
    Turn,
)


def make_table(session: Session, name: str = "ORD_MST") -> SourceTable:
    source = Source(name="erp", engine="sqlite", engine_version="3.40", url_ref="sqlite:////erp.sqlite")
    session.add(source)
    session.flush()
    table = SourceTable(source_id=source.id, name=name)
    session.add(table)
    session.flush()
    return table


def add_in_savepoint(session: Session, row: object) -> None:
    with session.begin_nested():
        session.add(row)
        session.flush()


def test_chunks_hold_vectors_and_full_text(session: Session) -> None:
    table = make_table(session)
    vector = [0.0] * 384
    vector[0] = 1.0
    session.add(
        SearchChunk(
            table_id=table.id,
            kind="head",
            ordinal=0,
            text="orders",
            embedding=vector,
            tsv=func.to_tsvector("simple", "ord mst orders"),
        )
    )
    session.flush()
    nearest = session.execute(
        select(SearchChunk.text, SearchChunk.embedding.cosine_distance(vector)).order_by(
            SearchChunk.embedding.cosine_distance(vector)
        )
    ).first()
    assert nearest is not None
    assert nearest[1] == pytest.approx(0.0)
    hit = session.scalar(
        select(func.count()).select_from(SearchChunk).where(SearchChunk.tsv.op("@@")(func.to_tsquery("simple", "mst")))
    )
    assert hit == 1


def test_table_role_is_constrained(session: Session) -> None:
    table = make_table(session)
    table.role = "mystery"
    with pytest.raises(IntegrityError), session.begin_nested():
        session.flush()


def test_copy_of_points_at_live_table_and_survives_its_deletion(session: Session) -> None:
    live = make_table(session)
    copy = SourceTable(source_id=live.source_id, name="ORD_MST_BAK", role="backup", copy_of_id=live.id)
    session.add(copy)
    session.flush()
    session.delete(live)
    session.flush()
    session.refresh(copy)
    assert copy.copy_of_id is None


def test_invisible_table_keeps_its_notes(session: Session) -> None:
    table = make_table(session)
    note = Note(text="stale since 2023", author_platform="slack", author_id="U1", tsv=func.to_tsvector("simple", "x"))
    session.add(note)
    session.flush()
    session.add(NoteTable(note_id=note.id, table_id=table.id))
    table.visible = False
    session.flush()
    assert session.scalar(select(func.count()).select_from(NoteTable).where(NoteTable.table_id == table.id)) == 1


def test_processed_events_are_unique_per_platform(session: Session) -> None:
    session.add(ProcessedEvent(platform="slack", event_id="Ev01"))
    session.add(ProcessedEvent(platform="teams", event_id="Ev01"))
    session.flush()
    with pytest.raises(IntegrityError):
        add_in_savepoint(session, ProcessedEvent(platform="slack", event_id="Ev01"))


def test_one_outbox_message_per_turn_and_kind(session: Session) -> None:
    conversation = Conversation(platform="slack", workspace_id="T1", channel_id="C1", thread_id="1.2")
    session.add(conversation)
    session.flush()
    turn = Turn(conversation_id=conversation.id, user_platform="slack", user_id="U1", question="how many orders?")
    session.add(turn)
    session.flush()
    assert turn.status == "queued"
    session.add(OutboxMessage(turn_id=turn.id, kind="answer", payload={"text": "42"}))
    session.flush()
    with pytest.raises(IntegrityError):
        add_in_savepoint(session, OutboxMessage(turn_id=turn.id, kind="answer", payload={"text": "42 again"}))


def test_turn_status_is_constrained(session: Session) -> None:
    conversation = Conversation(platform="slack", channel_id="C1")
    session.add(conversation)
    session.flush()
    lost = Turn(conversation_id=conversation.id, user_platform="slack", user_id="U1", question="q", status="lost")
    with pytest.raises(IntegrityError):
        add_in_savepoint(session, lost)
    assert session.execute(text("SELECT 1")).scalar() == 1
