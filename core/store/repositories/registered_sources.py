"""The registered sources' names and aliases, read with one plain statement: no ORM model is imported, so a
command that only compares them with the configuration file (`tablescout init`) does not load the models."""

from __future__ import annotations

from sqlalchemy import Connection, text


def names_and_aliases(connection: Connection) -> dict[str, list[str]]:
    """Each registered source's name and its aliases, as stored."""
    rows = connection.execute(text("SELECT name, aliases FROM sources")).all()
    return {str(name): list(aliases or []) for name, aliases in rows}
