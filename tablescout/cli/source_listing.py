"""What `tablescout source list` shows of each source: the store's sources and the configuration file's, merged.

Read with core.store.light_reads, so the command loads neither SQLAlchemy nor the ORM; it answers what
the store and the configuration file merged by name (tests/store/test_light_reads.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from core.store import light_reads

if TYPE_CHECKING:
    import psycopg

    from core.config.settings import Settings


@dataclass(frozen=True)
class SourceListing:
    name: str
    aliases: tuple[str, ...]
    engine: str | None
    engine_version: str | None
    url: str
    tables: int
    analysed_at: datetime | None
    in_config: bool
    registered: bool
    #: What the account may do beyond reading (catalog.account_capabilities labels); None: never checked.
    privileges: tuple[str, ...] | None = None


def _config_url(url: str) -> str:
    """A configured source's URL as shown (secrets hidden); only for a source not registered yet."""
    from catalog import source_url  # SQLAlchemy's URL parser, loaded only when a listing needs it

    return source_url.display(source_url.parse(url))


def list_sources(settings: Settings, conn: psycopg.Connection) -> list[SourceListing]:
    config = settings.file
    registered = {s.name: s for s in light_reads.sources(conn)}
    counts = light_reads.table_counts(conn)
    listings = []
    for name in sorted(set(registered) | set(config.sources)):
        row = registered.get(name)
        entry = config.sources.get(name)
        url = row.url_ref if row is not None else _config_url(entry.url) if entry else ""
        listings.append(
            SourceListing(
                name=name,
                aliases=tuple(row.aliases if row is not None else entry.aliases if entry else ()),
                engine=row.engine if row is not None else None,
                engine_version=row.engine_version if row is not None else None,
                url=url,
                tables=counts.get(row.id, 0) if row is not None else 0,
                analysed_at=row.analysed_at if row is not None else None,
                in_config=entry is not None,
                registered=row is not None,
                privileges=_privileges(row),
            )
        )
    return listings


def _privileges(row: light_reads.SourceRow | None) -> tuple[str, ...] | None:
    if row is None or row.write_capabilities is None:
        return None
    return tuple(str(label) for label in row.write_capabilities)
