"""The synced identity directory: users, groups and who belongs to which group."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from core.store.models import DirectoryGroup, DirectoryUser, GroupMembership


def upsert_user(
    session: Session,
    *,
    platform: str,
    user_id: str,
    synced_at: datetime,
    workspace_id: str | None = None,
    display_name: str | None = None,
    email: str | None = None,
    deactivated: bool = False,
    attributes: Mapping[str, str | list[str]] | None = None,
) -> int:
    """Insert or update one user; `attributes` replaces what the store held (None: no attributes)."""
    values = {
        "platform": platform,
        "user_id": user_id,
        "workspace_id": workspace_id,
        "display_name": display_name,
        "email": email,
        "deactivated": deactivated,
        "attributes": dict(attributes or {}),
        "synced_at": synced_at,
    }
    stmt = insert(DirectoryUser).values(values)
    upsert = stmt.on_conflict_do_update(
        index_elements=[DirectoryUser.platform, DirectoryUser.user_id],
        set_={k: stmt.excluded[k] for k in values if k not in ("platform", "user_id")},
    ).returning(DirectoryUser.id)
    return int(session.execute(upsert).scalar_one())


def upsert_group(
    session: Session,
    *,
    platform: str,
    group_id: str,
    synced_at: datetime,
    workspace_id: str | None = None,
    handle: str | None = None,
    name: str | None = None,
) -> int:
    values = {
        "platform": platform,
        "group_id": group_id,
        "workspace_id": workspace_id,
        "handle": handle,
        "name": name,
        "synced_at": synced_at,
    }
    stmt = insert(DirectoryGroup).values(values)
    upsert = stmt.on_conflict_do_update(
        index_elements=[DirectoryGroup.platform, DirectoryGroup.group_id],
        set_={k: stmt.excluded[k] for k in values if k not in ("platform", "group_id")},
    ).returning(DirectoryGroup.id)
    return int(session.execute(upsert).scalar_one())


def replace_members(session: Session, group_pk: int, user_pks: list[int]) -> None:
    """Make the group's membership exactly `user_pks` (a sync sees the whole list)."""
    session.execute(delete(GroupMembership).where(GroupMembership.group_id == group_pk))
    if user_pks:
        session.execute(
            insert(GroupMembership),
            [{"group_id": group_pk, "user_id": u} for u in sorted(set(user_pks))],
        )


def user(session: Session, platform: str, user_id: str) -> DirectoryUser | None:
    return session.scalars(
        select(DirectoryUser).where(DirectoryUser.platform == platform, DirectoryUser.user_id == user_id)
    ).first()


def group(session: Session, platform: str, group_id: str) -> DirectoryGroup | None:
    return session.scalars(
        select(DirectoryGroup).where(DirectoryGroup.platform == platform, DirectoryGroup.group_id == group_id)
    ).first()


def groups_of(session: Session, platform: str, user_id: str) -> list[DirectoryGroup]:
    """Groups the user belongs to, as of the last sync."""
    stmt = (
        select(DirectoryGroup)
        .join(GroupMembership, GroupMembership.group_id == DirectoryGroup.id)
        .join(DirectoryUser, DirectoryUser.id == GroupMembership.user_id)
        .where(DirectoryUser.platform == platform, DirectoryUser.user_id == user_id)
        .order_by(DirectoryGroup.group_id)
    )
    return list(session.scalars(stmt))
