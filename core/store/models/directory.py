"""The workspace identity directory as last synced: users, groups and memberships (Slack and Entra ID)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from core.store.models.base import Base


class DirectoryUser(Base):
    __tablename__ = "directory_users"
    __table_args__ = (UniqueConstraint("platform", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))
    workspace_id: Mapped[str | None] = mapped_column(String(128))
    user_id: Mapped[str] = mapped_column(String(128))
    display_name: Mapped[str | None] = mapped_column(String(256))
    email: Mapped[str | None] = mapped_column(String(320))
    deactivated: Mapped[bool] = mapped_column(default=False, server_default="false")
    #: Profile attributes by normalised name (`city`, `employee_id`, ...): a string, or a list of strings for
    #: multi-valued ones (`departments`); an attribute the directory does not give is absent (see bot.directory).
    attributes: Mapped[dict[str, str | list[str]]] = mapped_column(
        JSONB, default=dict, server_default=text("'{}'::jsonb")
    )
    synced_at: Mapped[datetime]


class DirectoryGroup(Base):
    """A Slack user group (id and @handle) or an Entra ID group (object id)."""

    __tablename__ = "directory_groups"
    __table_args__ = (UniqueConstraint("platform", "group_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))
    workspace_id: Mapped[str | None] = mapped_column(String(128))
    group_id: Mapped[str] = mapped_column(String(128))
    handle: Mapped[str | None] = mapped_column(String(128))
    name: Mapped[str | None] = mapped_column(String(256))
    synced_at: Mapped[datetime]


class GroupMembership(Base):
    __tablename__ = "group_memberships"

    group_id: Mapped[int] = mapped_column(ForeignKey("directory_groups.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        ForeignKey("directory_users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
