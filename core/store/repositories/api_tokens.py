"""API tokens: stored by hash, listed, revoked, and found by the hash of a presented token (`core.access.tokens`
decides whether one may be used: not revoked, not expired)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from core.access.users import UserRef
from core.store.models import ApiToken


def add(
    session: Session,
    *,
    user: UserRef,
    name: str,
    token_hash: str,
    rate_per_minute: int,
    expires_at: datetime | None,
    created_by: str,
) -> ApiToken:
    row = ApiToken(
        user_platform=user.platform,
        user_id=user.user_id,
        name=name,
        token_hash=token_hash,
        rate_per_minute=rate_per_minute,
        expires_at=expires_at,
        created_by=created_by,
    )
    session.add(row)
    session.flush()
    return row


def all_tokens(session: Session, *, include_revoked: bool = True) -> list[ApiToken]:
    stmt = select(ApiToken).order_by(ApiToken.id)
    if not include_revoked:
        stmt = stmt.where(ApiToken.revoked_at.is_(None))
    return list(session.scalars(stmt))


def by_hash(session: Session, token_hash: str) -> ApiToken | None:
    return session.scalars(select(ApiToken).where(ApiToken.token_hash == token_hash)).one_or_none()


def revoke(session: Session, token_id: int, at: datetime) -> ApiToken | None:
    """Mark the token revoked (once; a second revoke keeps the first time). None when there is no such token."""
    row = session.get(ApiToken, token_id)
    if row is not None and row.revoked_at is None:
        row.revoked_at = at
    return row


def touch(session: Session, token_id: int, at: datetime, every: timedelta) -> None:
    """Record a use at `at`, at most once per `every` (a busy token does not write on every request)."""
    session.execute(
        update(ApiToken)
        .where(ApiToken.id == token_id)
        .where(or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at < at - every))
        .values(last_used_at=at)
    )
