"""Aliases of source databases: other names users write as `@alias` in chat, in `--db`, and in grants.

The configuration file is their one source of truth. Grants read the file; chat pins, `--db`, cards and the SQL
tools read the store's copy, which `tablescout init` brings in line with the file (`apply_configured_aliases`) and
`tablescout source alias add|remove` changes together with the file, restoring the file if the store write fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from catalog.registration import config_sources, labels_in_use, restore_file
from core.config.file import check_name, read_document, validate_document, write_document
from core.config.settings import Settings
from core.errors import NotFoundError, SourceError
from core.store.database import Store
from core.store.repositories import sources as source_repo


@dataclass(frozen=True)
class AliasChange:
    """The aliases of a registered source before and after `init` applied the file; `error` when it could not."""

    source: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    error: str | None = None


def apply_configured_aliases(settings: Settings, store: Store) -> list[AliasChange]:
    """Give every registered source the aliases the configuration file writes for it; one change per source whose
    aliases differed. An alias that a source missing from the file still uses is not taken from it."""
    config = settings.file
    changes: list[AliasChange] = []
    with store.transaction() as session:
        rows = source_repo.all_sources(session)
        outside = {a.lower(): r.name for r in rows if r.name not in config.sources for a in (r.name, *r.aliases)}
        for row in rows:
            entry = config.sources.get(row.name)
            if entry is None or list(row.aliases) == list(entry.aliases):
                continue
            taken = [a for a in entry.aliases if a.lower() in outside]
            if taken:
                owner = outside[taken[0].lower()]
                error = f"{taken[0]!r} is also a name or alias of source {owner!r}, which the file does not list"
                changes.append(AliasChange(row.name, tuple(row.aliases), tuple(row.aliases), error))
                continue
            changes.append(AliasChange(row.name, tuple(row.aliases), tuple(entry.aliases)))
            row.aliases = list(entry.aliases)
        session.flush()
    return changes


def _entry(settings: Settings, document: CommentedMap, name: str) -> tuple[str, CommentedMap]:
    sources = document.get("sources") or {}
    key = next((str(n) for n in sources if str(n).lower() == name.lower()), None)
    if key is None:
        raise NotFoundError(
            f"there is no source named {name!r} in {settings.config_path}; `tablescout source list` shows them"
        )
    entry = sources[key]
    assert isinstance(entry, CommentedMap)  # validated: every source is a mapping with its url
    return key, entry


def add_alias(settings: Settings, store: Store, name: str, alias: str) -> str:
    """Give source `name` the alias `alias` in the file and the store; returns the source's name."""
    try:
        check_name(alias, "alias")
    except ValueError as exc:
        raise SourceError(str(exc)) from exc
    path = settings.config_path
    document = read_document(path)
    validate_document(path, document)
    key, entry = _entry(settings, document, name)
    with store.transaction() as session:
        owner = labels_in_use(config_sources(document), session).get(alias.lower())
        if owner is not None:
            what = "a source" if owner.lower() == alias.lower() else f"an alias of source {owner!r}"
            raise SourceError(f"{alias!r} is already {what}; choose another alias or remove it first")
    aliases = entry.get("aliases")
    if not isinstance(aliases, CommentedSeq):
        aliases = entry["aliases"] = CommentedSeq(aliases or [])
    aliases.append(alias)
    _save(settings, store, document, key)
    return key


def remove_alias(settings: Settings, store: Store, name: str, alias: str) -> str:
    """Take the alias `alias` from source `name` in the file and the store; returns the source's name."""
    path = settings.config_path
    document = read_document(path)
    validate_document(path, document)
    key, entry = _entry(settings, document, name)
    aliases = list(entry.get("aliases") or [])
    position = next((i for i, a in enumerate(aliases) if str(a).lower() == alias.lower()), None)
    if position is None:
        listed = ", ".join(str(a) for a in aliases) or "none"
        raise NotFoundError(f"source {key!r} has no alias {alias!r} (its aliases: {listed})")
    del entry["aliases"][position]
    if not entry["aliases"]:
        del entry["aliases"]
    _save(settings, store, document, key)
    return key


def _save(settings: Settings, store: Store, document: CommentedMap, key: str) -> None:
    """Write the file, then the store's copy of the source's aliases; the file is put back if the store fails."""
    path = settings.config_path
    previous = path.read_bytes() if path.exists() else None
    write_document(path, document)
    try:
        config = validate_document(path, document)
        with store.transaction() as session:
            row = source_repo.by_name(session, key)
            if row is not None:
                row.aliases = list(config.sources[key].aliases)
    except BaseException:
        restore_file(path, previous)
        raise
