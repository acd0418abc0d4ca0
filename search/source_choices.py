"""Which registered databases a search request may search: all those the principal may see, or the ones the request
pins by name or alias (each of which the principal must be allowed to query)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.store.repositories import search_stats
from search.database_selection import SourceChoice
from search.request import SearchInputError


def source_choices(session: Session, principal: Principal, pins: Sequence[str]) -> tuple[list[SourceChoice], int, bool]:
    """(the choices, how many databases the principal may see, whether the choices were pinned). Without pins the
    choices are every database the principal may see, by name; with pins, the pinned ones in the order first
    pinned, matched case-insensitively by name or alias. SearchInputError for a pin that names no database or one
    the principal may not see."""
    registered = search_stats.search_context(session).sources  # with the statistics, in one statement
    allowed = [s for s in registered if principal.may_see(s.name)]
    to_choice = {
        s.name: SourceChoice(
            s.id, s.name, s.summary, list(s.summary_embedding) if s.summary_embedding is not None else None
        )
        for s in allowed
    }
    if not pins:
        return list(to_choice.values()), len(allowed), False
    chosen = []
    everything = {s.name.lower(): s for s in registered}
    for pin in pins:
        match = everything.get(pin.lower()) or next(
            (s for s in everything.values() if pin.lower() in (a.lower() for a in s.aliases)), None
        )
        if match is None:
            raise SearchInputError(f"there is no database named {pin!r}")
        if match.name not in to_choice:
            raise SearchInputError(f"you may not query database {match.name!r}")
        if to_choice[match.name] not in chosen:
            chosen.append(to_choice[match.name])
    return chosen, len(allowed), True
