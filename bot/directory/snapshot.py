"""One platform's directory as read from its API, and writing it into the store.

A snapshot is complete: every group the platform lists and every member of each. Applying it makes the store say
exactly that for the platform: listed groups and users are upserted, each group's membership is replaced, and groups
and users the snapshot no longer holds are deleted (with their memberships), so a user who left every group has no
groups left and `resolve_principal` gives them the configured default role. Users are known only through the groups
they belong to, so the store's users of a platform are the members of at least one group. Each user's attributes
(`bot.directory.attributes`) are replaced by what the snapshot holds: an attribute the directory no longer gives is
gone after the sync.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from core.store.repositories import directory


@dataclass(frozen=True)
class UserEntry:
    user_id: str
    display_name: str | None = None
    email: str | None = None
    workspace_id: str | None = None
    attributes: Mapping[str, str | list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class GroupEntry:
    """A group and the platform user ids of its members (for Entra ID: every user in it, through nested groups)."""

    group_id: str
    members: tuple[str, ...]
    handle: str | None = None
    name: str | None = None
    workspace_id: str | None = None


@dataclass(frozen=True)
class DirectorySnapshot:
    platform: str
    groups: tuple[GroupEntry, ...]
    users: Mapping[str, UserEntry] = field(default_factory=dict)  # details of members, where the platform gives them
    #: Why no user attributes were read at all (a missing scope); None when they were.
    attributes_skipped: str | None = None

    def members(self) -> dict[str, UserEntry]:
        """Every user in at least one group, with the details known about them."""
        found: dict[str, UserEntry] = {}
        for group in self.groups:
            for user_id in group.members:
                if user_id not in found:
                    found[user_id] = self.users.get(user_id) or UserEntry(user_id, workspace_id=group.workspace_id)
        return found


@dataclass(frozen=True)
class SyncReport:
    """What one platform's sync did; `skipped` says why a platform was not synced at all."""

    platform: str
    groups: int = 0
    users: int = 0
    memberships: int = 0
    removed_groups: int = 0
    removed_users: int = 0
    skipped: str | None = None
    users_with_attributes: int = 0
    attributes_skipped: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "platform": self.platform,
            "synced": self.skipped is None,
            "groups": self.groups,
            "users": self.users,
            "memberships": self.memberships,
            "removed_groups": self.removed_groups,
            "removed_users": self.removed_users,
            "skipped": self.skipped,
            "users_with_attributes": self.users_with_attributes,
            "attributes_skipped": self.attributes_skipped,
        }


def apply_snapshot(session: Session, snapshot: DirectorySnapshot, *, now: datetime) -> SyncReport:
    """Make the store's directory for the snapshot's platform exactly the snapshot; the caller commits."""
    platform = snapshot.platform
    directory.lock_platform(session, platform)  # the scheduled sync and a command may overlap
    user_pks: dict[str, int] = {}
    with_attributes = 0
    for entry in snapshot.members().values():
        with_attributes += bool(entry.attributes)
        user_pks[entry.user_id] = directory.upsert_user(
            session,
            platform=platform,
            user_id=entry.user_id,
            synced_at=now,
            workspace_id=entry.workspace_id,
            display_name=entry.display_name,
            email=entry.email,
            attributes=entry.attributes,
        )
    group_pks: list[int] = []
    memberships = 0
    for group in snapshot.groups:
        pk = directory.upsert_group(
            session,
            platform=platform,
            group_id=group.group_id,
            synced_at=now,
            workspace_id=group.workspace_id,
            handle=group.handle,
            name=group.name,
        )
        members = sorted({user_pks[u] for u in group.members})
        directory.replace_members(session, pk, members)
        group_pks.append(pk)
        memberships += len(members)
    removed_groups = directory.delete_groups_except(session, platform, group_pks)
    removed_users = directory.delete_users_except(session, platform, user_pks.values())
    return SyncReport(
        platform=platform,
        groups=len(group_pks),
        users=len(user_pks),
        memberships=memberships,
        removed_groups=removed_groups,
        removed_users=removed_users,
        users_with_attributes=with_attributes,
        attributes_skipped=snapshot.attributes_skipped,
    )
