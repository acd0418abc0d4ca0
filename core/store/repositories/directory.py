"""The synced identity directory: users, groups and who belongs to which group."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ARRAY, Integer, bindparam, delete, func, not_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import CursorResult
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


def lock_platform(session: Session, platform: str) -> None:
    """Serialise writers of one platform's directory (the scheduled sync and a command may overlap): a transaction
    lock, held until the caller's transaction ends."""
    session.execute(select(func.pg_advisory_xact_lock(func.hashtext(f"tablescout.directory.{platform}"))))


def delete_users_except(session: Session, platform: str, keep: Iterable[int]) -> int:
    """Delete the platform's users other than those with ids `keep` (their memberships go with them); how many."""
    return _delete_except(session, DirectoryUser, platform, keep)


def delete_groups_except(session: Session, platform: str, keep: Iterable[int]) -> int:
    """Delete the platform's groups other than those with ids `keep` (their memberships go with them); how many."""
    return _delete_except(session, DirectoryGroup, platform, keep)


def _delete_except(
    session: Session, model: type[DirectoryUser] | type[DirectoryGroup], platform: str, keep: Iterable[int]
) -> int:
    kept = bindparam("kept", sorted(set(keep)), type_=ARRAY(Integer))  # one array parameter, however many rows
    result = session.execute(delete(model).where(model.platform == platform, not_(model.id == func.any(kept))))
    assert isinstance(result, CursorResult)
    return int(result.rowcount)


@dataclass(frozen=True)
class Membership:
    """A user's membership of a group: the platform's ids of both, and the group's handle (Slack's @handle)."""

    user_id: str
    group_id: str
    handle: str | None


def active_memberships(session: Session, platform: str) -> list[Membership]:
    """Every membership of the platform's users who are not deactivated, by user id."""
    rows = session.execute(
        select(DirectoryUser.user_id, DirectoryGroup.group_id, DirectoryGroup.handle)
        .join(GroupMembership, GroupMembership.user_id == DirectoryUser.id)
        .join(DirectoryGroup, DirectoryGroup.id == GroupMembership.group_id)
        .where(DirectoryUser.platform == platform, DirectoryUser.deactivated.is_(False))
        .order_by(DirectoryUser.user_id)
    ).all()
    return [Membership(user_id, group_id, handle) for user_id, group_id, handle in rows]
