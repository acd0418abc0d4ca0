"""`tablescout init`: create or migrate the metadata store, create the mask key (`mask_key`) unless the settings
give one, register sources written into the config file, and give registered sources the aliases the file writes for
them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from tablescout.cli.context import console, errors, settings
from tablescout.cli.starter_config import write_starter_config

if TYPE_CHECKING:
    from core.config.settings import Settings
    from core.store.database import Store


def init() -> None:
    """Create or migrate the metadata store (embedded unless TABLESCOUT_DATABASE_URL is set)."""
    # Imported here, not at the top, so that building the command line does not load the store and catalog code;
    # the catalog code (and with it the ORM) only when the configuration file asks for a change.
    from core.store import migrate
    from core.store.database import open_store

    config = settings()
    config.home.mkdir(parents=True, exist_ok=True)
    created = write_starter_config(config.config_path)
    key_failed = _mask_key(config)
    store = open_store(config)
    try:
        before = migrate.current_revision(store.engine)
        migrate.upgrade(store.engine)
        after = migrate.current_revision(store.engine)
        where = (
            f"embedded PostgreSQL in {config.embedded_pgdata}"
            if store.embedded is not None
            else store.engine.url.render_as_string(hide_password=True)
        )
        change = "created" if before is None else "up to date" if before == after else f"migrated from {before}"
        console.print(f"Metadata store: {where} ({change}, revision {after})")
        console.print(f"Configuration: {config.config_path}" + (" (created)" if created else ""))
        if not config.file.roles:
            console.print(
                "No roles yet: chat users may query nothing until you write roles (and groups or a default_role) "
                f"into {config.config_path}; the file's comments show how."
            )
        failed = _configured_sources(config, store) if _file_differs(config, store) else False
    finally:
        store.close()
    if failed or key_failed:
        raise typer.Exit(1)


def _mask_key(config: Settings) -> bool:
    """Create the key of `hash` column masks when there is none, and say where it is; True when it cannot be used
    (the rest of init still runs, and the command then fails)."""
    from core.access.mask_key import SETTING, MaskKeyError, ensure_key_file

    try:
        state = ensure_key_file(config)
    except MaskKeyError as exc:
        errors.print(f"[red]mask key:[/] {escape(str(exc))}", highlight=False)
        return True
    if state.status == "setting":
        console.print(f"Mask key: from {SETTING}")
    elif state.status == "created":
        console.print(f"Mask key: {escape(str(state.path))} (created, readable by its owner only)")
    else:
        console.print(f"Mask key: {escape(str(state.path))}")
    return False


def _file_differs(config: Settings, store: Store) -> bool:
    """Whether the file lists a source the store does not have, or aliases other than the store's: only then is the
    catalog code (and with it the ORM) loaded. One plain query; anything unexpected leaves the decision to it."""
    listed = config.file.sources
    if not listed:
        return False
    from core.store.repositories.registered_sources import names_and_aliases

    with store.engine.connect() as conn:
        registered = names_and_aliases(conn)
    known = {name.lower() for name in registered}
    if any(name.lower() not in known for name in listed):
        return True
    return any(name in listed and aliases != list(listed[name].aliases) for name, aliases in registered.items())


def _configured_sources(config: Settings, store: Store) -> bool:
    """Register the sources the file lists and give them its aliases; True when one of them failed."""
    from catalog.registration import register_configured
    from catalog.source_aliases import apply_configured_aliases

    failed = False
    for name, error in register_configured(config, store):
        if error is None:
            console.print(f"Registered source {name} from the configuration file")
        else:
            failed = True
            errors.print(f"[red]source {name} from the configuration file was not registered:[/] {error}")
    for aliased in apply_configured_aliases(config, store):
        if aliased.error is not None:
            failed = True
            errors.print(f"[red]aliases of source {aliased.source} were not changed:[/] {aliased.error}")
        else:
            after = ", ".join(aliased.after) or "none"
            console.print(f"Aliases of source {aliased.source} from the configuration file: {after}")
    return failed
