"""Registered source databases."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from core.store.models import Source, SourceTable


def by_name(session: Session, name: str) -> Source | None:
    return session.scalars(select(Source).where(func.lower(Source.name) == name.lower())).first()


def by_name_or_alias(session: Session, label: str) -> Source | None:
    wanted = label.lower()
    for source in session.scalars(select(Source)):
        if source.name.lower() == wanted or any(a.lower() == wanted for a in source.aliases):
            return source
    return None


def all_sources(session: Session) -> Sequence[Source]:
    return session.scalars(select(Source).order_by(Source.name)).all()


def labels(session: Session) -> dict[str, str]:
    """Every name and alias, lower-cased, mapped to the source's name (how chat pins and `--db` are resolved)."""
    found: dict[str, str] = {}
    for source in all_sources(session):
        found[source.name.lower()] = source.name
        found.update({alias.lower(): source.name for alias in source.aliases})
    return found


def add(session: Session, source: Source) -> Source:
    session.add(source)
    session.flush()
    return source


def remove(session: Session, name: str) -> bool:
    deleted = session.scalars(delete(Source).where(func.lower(Source.name) == name.lower()).returning(Source.id))
    return deleted.first() is not None


def table_counts(session: Session) -> dict[int, int]:
    """Visible tables per source id."""
    rows = session.execute(
        select(SourceTable.source_id, func.count()).where(SourceTable.visible).group_by(SourceTable.source_id)
    )
    return {source_id: count for source_id, count in rows.all()}


def set_write_capabilities(session: Session, source_id: int, capabilities: list[str] | None) -> None:
    """Record what the source's account may do beyond reading, as its latest check found."""
    session.execute(update(Source).where(Source.id == source_id).values(write_capabilities=capabilities))
