"""Registering, listing and removing source databases.

A source lives in two places that must agree: the configuration file (its URL, written as the operator gave it,
with secrets only as `${VAR}` placeholders) and the metadata store (engine, version, analysis state). Adding
validates everything and connects once before writing either, and restores the file if the store write fails.
Connecting also checks what the account may do beyond reading (catalog.account_check): a superuser is refused unless
the operator allows it, anything else that can write is saved and shown as a warning.
"""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml.comments import CommentedMap
from sqlalchemy import URL
from sqlalchemy.orm import Session

from catalog import source_url
from catalog.account_check import refusal
from catalog.probe import SourceInfo, probe
from core.config.file import check_name, read_document, validate_document, write_document
from core.config.settings import Settings
from core.errors import NotFoundError, SourceError
from core.store.database import Store
from core.store.models import Source
from core.store.repositories import sources as source_repo


def labels_in_use(configured: dict[str, list[str]], session: Session) -> dict[str, str]:
    """Every name and alias, lower-cased, in the file (`configured`) or the store, mapped to its source's name."""
    used: dict[str, str] = {}
    for name, aliases in configured.items():
        for label in (name, *aliases):
            used[label.lower()] = name
    for source in source_repo.all_sources(session):
        for label in (source.name, *source.aliases):
            used.setdefault(label.lower(), source.name)
    return used


def _check_labels(name: str, aliases: list[str], used: dict[str, str]) -> None:
    for label in (name, *aliases):
        try:
            check_name(label, "source name" if label == name else "alias")
        except ValueError as exc:
            raise SourceError(str(exc)) from exc
    lowered = [label.lower() for label in (name, *aliases)]
    if len(set(lowered)) != len(lowered):
        raise SourceError("the name and aliases of a source must all differ")
    for label in (name, *aliases):
        owner = used.get(label.lower())
        if owner is not None:
            what = "a source" if owner.lower() == label.lower() else f"an alias of source {owner!r}"
            raise SourceError(f"{label!r} is already {what}; choose another name or remove it first")


def config_sources(document: CommentedMap) -> dict[str, list[str]]:
    """Each source of the parsed file with its aliases."""
    sources = document.get("sources") or {}
    return {str(n): list((e or {}).get("aliases") or []) for n, e in sources.items()}


def add_source(
    settings: Settings, store: Store, name: str, url: str, aliases: list[str], *, allow_privileged: bool = False
) -> SourceInfo:
    """Register a source; a superuser account is refused (nothing saved) unless `allow_privileged`."""
    path = settings.config_path
    document = read_document(path)
    validate_document(path, document)
    with store.transaction() as session:
        _check_labels(name, aliases, labels_in_use(config_sources(document), session))
    parsed = source_url.parse(url)
    secrets = source_url.clear_text_secrets(parsed)
    if secrets:
        raise SourceError(
            f"the URL holds a {' and a '.join(secrets)} in clear text; tablescout will not store it. "
            "Put the secret in an environment variable and write ${VAR_NAME} in its place, e.g. "
            "mysql://reader:${ERP_DB_PASSWORD}@db.internal/erp"
        )
    shown = source_url.display(parsed)
    expanded = source_url.expand(parsed, settings.environment_value)
    info = probe(expanded, shown)
    if info.account.superuser and not allow_privileged:
        raise SourceError(refusal(name, info.engine, expanded, info.account))

    entry = CommentedMap()
    entry["url"] = source_url.render(parsed)
    if aliases:
        entry["aliases"] = list(aliases)
    if document.get("sources") is None:
        document["sources"] = CommentedMap()
    document["sources"][name] = entry
    previous = path.read_bytes() if path.exists() else None
    write_document(path, document)
    try:
        with store.transaction() as session:
            source_repo.add(
                session,
                Source(
                    name=name,
                    aliases=list(aliases),
                    engine=info.engine,
                    engine_version=info.version,
                    url_ref=shown,
                    write_capabilities=info.account.stored(),
                ),
            )
    except BaseException:
        restore_file(path, previous)
        raise
    return info


def restore_file(path: Path, previous: bytes | None) -> None:
    """Put back the file as it was before a change whose store half failed (None: there was no file)."""
    if previous is None:
        path.unlink(missing_ok=True)
    else:
        tmp = path.with_name(f".{path.name}.restore")
        tmp.write_bytes(previous)
        tmp.replace(path)


def remove_source(settings: Settings, store: Store, name: str) -> None:
    """Forget a source: its entry in the configuration file and everything analysed about it."""
    path = settings.config_path
    document = read_document(path)
    validate_document(path, document)
    sources = document.get("sources") or {}
    in_config = next((n for n in sources if str(n).lower() == name.lower()), None)
    with store.transaction() as session:
        registered = source_repo.by_name(session, name)
        if in_config is None and registered is None:
            raise NotFoundError(f"there is no source named {name!r}; `tablescout source list` shows them")
        previous = path.read_bytes() if path.exists() else None
        if in_config is not None:
            del sources[in_config]
            write_document(path, document)
        try:
            if registered is not None:
                source_repo.remove(session, registered.name)
                session.flush()
        except BaseException:
            restore_file(path, previous)
            raise


def register_configured(settings: Settings, store: Store) -> list[tuple[str, str | None]]:
    """Register sources written into the configuration file by hand; returns (name, error or None) for each.
    A superuser account is not registered: `source add --allow-privileged` is the one way to accept one."""
    results: list[tuple[str, str | None]] = []
    with store.transaction() as session:
        known = {s.name.lower() for s in source_repo.all_sources(session)}
    for name, entry in settings.file.sources.items():
        if name.lower() in known:
            continue
        try:
            parsed = source_url.parse(entry.url)
            shown = source_url.display(parsed)
            expanded = source_url.expand(parsed, settings.environment_value)
            info = probe(expanded, shown)
        except SourceError as exc:
            results.append((name, str(exc)))
            continue
        if info.account.superuser:
            results.append((name, _configured_refusal(name, info, expanded)))
            continue
        with store.transaction() as session:
            source_repo.add(
                session,
                Source(
                    name=name,
                    aliases=list(entry.aliases),
                    engine=info.engine,
                    engine_version=info.version,
                    url_ref=shown,
                    write_capabilities=info.account.stored(),
                ),
            )
        results.append((name, None))
    return results


def _configured_refusal(name: str, info: SourceInfo, url: URL) -> str:
    force_hint = (
        f"to register this account anyway, remove {name} from the configuration file and run "
        f"`tablescout source add {name} URL --allow-privileged`"
    )
    return refusal(name, info.engine, url, info.account, force_hint)
