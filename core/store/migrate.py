"""Schema changes through Alembic only: upgrade to head, downgrade, and the check that a store is current.

The check that a store is current runs at the start of every command and task, so it does not load Alembic: the
stored revision is read with plain SQL from Alembic's version table, and the head revision from the `revision` and
`down_revision` lines of the migration scripts (falling back to Alembic for anything those lines do not settle).
Upgrading a store that is already at head is answered the same way, so `tablescout init` on a current store does
not load Alembic either.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import StoreError

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Connection, Engine

# SQLAlchemy is imported where an engine is used: the light commands (core.store.light_store) check the stored
# revision over a plain psycopg connection, comparing it with `head_revision`.

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: Alembic's own table of the applied revision (its default name; env.py does not change it).
VERSION_TABLE = "alembic_version"
#: The newest migration's revision, for the light commands' check (core.store.light_store), which should not even
#: read the scripts; tests/core/test_migrations.py fails until a new migration's revision is written here.
HEAD_REVISION = "0020"


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    head = scripted_head(MIGRATIONS / "versions")
    return head if head is not None else alembic_head_revision()


def alembic_head_revision() -> str:
    """The head as Alembic computes it, loading every migration script."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise StoreError("no migrations found; the installation is incomplete")
    return head


def scripted_head(versions: Path) -> str | None:
    """The one revision no other script names as its `down_revision`, read from the scripts' source without running
    them; None when that is not clear-cut (no scripts, several heads, a value that is not a plain string), which
    leaves the answer to Alembic."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in versions.glob("*.py"):
        if path.name.startswith(("__init__", ".#")):
            continue  # the files Alembic skips
        values = _assignments(path, ("revision", "down_revision"))
        revision, down = values.get("revision"), values.get("down_revision")
        if not isinstance(revision, str):
            return None
        revisions.add(revision)
        if isinstance(down, str):
            parents.add(down)
        elif isinstance(down, tuple) and all(isinstance(d, str) for d in down):
            parents.update(down)
        elif down is not None:
            return None
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def _assignments(path: Path, names: tuple[str, ...]) -> dict[str, object]:
    """Module-level `NAME = literal` (or `NAME: type = literal`) values of `names` in one script."""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return {}
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in names:
            try:
                found[target.id] = ast.literal_eval(value)
            except ValueError:
                found[target.id] = value  # not a literal: neither a str nor None, so the caller defers to Alembic
    return found


def current_revision(engine: Engine) -> str | None:
    """The revision recorded in the store (None when it was never migrated), as Alembic records it."""
    from sqlalchemy import inspect, text

    with engine.connect() as conn:
        if not inspect(conn).has_table(VERSION_TABLE):
            return None
        stored = [str(v) for v in conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars()]
    if len(stored) > 1:
        raise StoreError(f"the metadata store records several revisions ({', '.join(sorted(stored))})")
    return stored[0] if stored else None


def upgrade(engine: Engine, revision: str = "head") -> None:
    if revision == "head" and current_revision(engine) == head_revision():
        return  # already current: nothing for Alembic to do
    from alembic import command

    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), revision)


def downgrade(engine: Engine, revision: str) -> None:
    from alembic import command

    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), revision)


def require_current(engine: Engine) -> None:
    """Refuse to work on a store whose schema is missing or older than this version of tablescout."""
    current = current_revision(engine)
    if current is None:
        raise StoreError("the metadata store is not initialised; run `tablescout init`")
    if current != head_revision():
        raise StoreError(f"the metadata store is at revision {current}; run `tablescout init` to migrate it")
