"""API tokens (SPEC §8, other clients): a bearer token for the HTTP API and the MCP server that acts as one
directory user. Only the token's SHA-256 is stored; the token itself is shown once, when it is created."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, String
from sqlalchemy.orm import Mapped, mapped_column

from core.store.models.base import Base, created_at_column


class ApiToken(Base):
    __tablename__ = "api_tokens"
    __table_args__ = (CheckConstraint("rate_per_minute > 0", name="rate_per_minute"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    #: The directory user the token acts as ("slack" or "teams", and their id there).
    user_platform: Mapped[str] = mapped_column(String(20))
    user_id: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(200))
    #: SHA-256 of the token, hex; the token is random (256 bits), so a plain digest is enough to look it up by.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    #: Requests a minute the token may make (HTTP API and MCP together).
    rate_per_minute: Mapped[int]
    created_by: Mapped[str] = mapped_column(String(150))
    created_at: Mapped[datetime] = created_at_column()
    expires_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
