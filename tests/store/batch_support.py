"""Each ranking of `search_batch.rankings` asked for alone, as the tests read them; the statements sent."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from core.access.users import UserRef
from core.store.repositories.search_batch import NoteQuery, RankingQuery, rankings
from core.store.repositories.search_queries import Hit, NoteHit


def keyword_hits_of(
    session: Session, queries: Sequence[str], source_ids: Sequence[int], limit: int, bm25: bool = False
) -> list[list[Hit]]:
    return rankings(session, RankingQuery(source_ids, limit, bm25, queries)).keyword


def semantic_among(session: Session, vectors: Sequence[list[float]], table_ids: Sequence[int]) -> list[list[Hit]]:
    return rankings(session, RankingQuery([], 0, among_vectors=vectors, among_tables=table_ids)).among


def note_hits(
    session: Session,
    query: str | None,
    vector: list[float],
    source_ids: Sequence[int],
    viewer: UserRef | None,
    limit: int,
    min_similarity: float,
) -> list[NoteHit]:
    notes = NoteQuery(query, vector, viewer, limit, min_similarity)
    return rankings(session, RankingQuery(source_ids, limit, notes=notes)).notes


@contextmanager
def statements(session: Session) -> Iterator[list[str]]:
    """The statements the session sends inside the block, as they are sent."""
    sent: list[str] = []
    connection = session.connection()

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    event.listen(connection, "before_cursor_execute", seen)
    try:
        yield sent
    finally:
        event.remove(connection, "before_cursor_execute", seen)
