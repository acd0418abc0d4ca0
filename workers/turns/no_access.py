"""The answer of a turn whose user may query nothing: said plainly, instead of a model turn without tools.

A new installation has no roles yet, so every chat user is in this position until an administrator writes some;
the answer says who to ask and what the administrator configures in tablescout.yaml. It names the directory groups
whose members hold an admin role (workspace-visible names only, never a database or table).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.config.file import ConfigFile, GroupMapping
from core.store.repositories import directory

#: At most this many admin groups are named.
NAMED_GROUPS = 3

NO_SOURCES = (
    "I cannot look anything up yet: no database has been connected to tablescout. An administrator adds one with "
    "`tablescout source add NAME URL` and analyses it with `tablescout analyze NAME`."
)

GROUP_KIND = {"slack": "Slack user group", "teams": "Microsoft Entra ID group"}


def _label(session: Session, mapping: GroupMapping) -> str | None:
    """How users know the group: its @handle (Slack) or its name (Entra ID), never a bare id."""
    synced = directory.group(session, mapping.platform, mapping.group)
    if synced is not None and synced.handle:
        return f"@{synced.handle.removeprefix('@')}"
    if synced is not None and synced.name:
        return synced.name
    return mapping.group if mapping.group.startswith("@") else None


def admin_groups(session: Session, config: ConfigFile, platform: str) -> list[str]:
    """The groups of `platform` mapped to a role with `admin: true`, as their members would recognise them."""
    labels: list[str] = []
    for mapping in config.groups:
        if mapping.platform != platform:
            continue
        if not any(config.roles[r].admin for r in mapping.roles if r in config.roles):
            continue
        label = _label(session, mapping)
        if label is not None and label not in labels:
            labels.append(label)
    return labels[:NAMED_GROUPS]


def no_access_answer(session: Session, config: ConfigFile, principal: Principal, registered: int) -> str:
    """What to tell a user who may query none of the `registered` databases (none registered: say that)."""
    if registered == 0:
        return NO_SOURCES
    groups = admin_groups(session, config, principal.platform)
    if groups:
        who = "a member of " + " or ".join(groups) + " (tablescout administrators)"
    else:
        who = "the person who runs tablescout for your workspace"
    kind = GROUP_KIND.get(principal.platform, "directory group")
    return (
        "You may not query any database yet, so I cannot answer this. "
        f"Ask {who} to give you access. In tablescout.yaml an administrator defines a role under `roles:` "
        f"(the databases and tables it may read) and maps your {kind} to it under `groups:`, or sets "
        "`default_role:` for everyone in no mapped group. The change applies from your next question."
    )


def unknown_database_answer(names: Sequence[str], allowed: Sequence[str]) -> str:
    """What to tell a user whose `@name` pins (`names`) match no database: which ones they may ask (`allowed`, the
    databases this user may query, never others), and how to pin one."""
    quoted = " or ".join(f"@{n}" for n in names)
    head = f"There is no database called {quoted}." if len(names) == 1 else f"There are no databases called {quoted}."
    if not allowed:
        return head
    listed = ", ".join(allowed[:-1]) + f" and {allowed[-1]}" if len(allowed) > 1 else allowed[0]
    pin = f"pin one with @{allowed[0]}, or ask without a pin and I will look in each"
    return f"{head} You can ask about {listed}: {pin}."
