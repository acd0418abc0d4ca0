"""API tokens for the HTTP API and MCP (`api`) and chat's token commands (`bot.token_commands`): made here, stored
by hash (`core.store.repositories.api_tokens`), and checked on every request.

A token is `tsk_` and 43 URL-safe characters (256 random bits). It acts as one user of the synced directory (a
Slack or Teams user), so its roles, row filters, column masks and audit rows are those of that user in chat; it is
refused once revoked or expired, and when its user has left the directory.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from core.access.permissions import parse_user_ref, resolve_principal
from core.access.users import UserRef
from core.config.file import ConfigFile
from core.errors import ConfigError, NotFoundError, TablescoutError
from core.store.models import ApiToken
from core.store.models.base import utcnow
from core.store.repositories import api_tokens

PREFIX = "tsk_"
#: A token's lifetime when none is given.
DEFAULT_EXPIRY = "90d"
DEFAULT_RATE_PER_MINUTE = 60
MAX_RATE_PER_MINUTE = 10_000
#: `last_used` is written at most this often per token.
TOUCH_EVERY = timedelta(minutes=1)
_DURATION = re.compile(r"^(?P<n>\d{1,5})(?P<unit>[hdw])$")
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
_TOKEN = re.compile(r"^tsk_[A-Za-z0-9_-]{43}$")


class TokenRefused(TablescoutError):
    """The request's token is missing, malformed, unknown, revoked or expired, or its user has left the directory."""


@dataclass(frozen=True)
class Caller:
    """Who a request is from: a token and the directory user it acts as."""

    token_id: int
    user: UserRef
    rate_per_minute: int


@dataclass(frozen=True)
class IssuedToken:
    row: ApiToken
    secret: str  # shown once; only its hash is stored


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_expiry(text: str, now: datetime) -> datetime | None:
    """`90d`, `12h`, `4w` from `now`; `never` for no expiry."""
    value = text.strip().lower()
    if value == "never":
        return None
    match = _DURATION.match(value)
    if match is None or int(match["n"]) == 0:
        raise ConfigError(f"--expires takes a duration such as 90d, 12h or 4w, or never; not {text!r}")
    return now + int(match["n"]) * _UNITS[match["unit"]]


def directory_user(session: Session, config: ConfigFile, ref: str) -> UserRef:
    """The Slack or Teams user `ref` names (slack:ID, teams:ID), who must be in the synced directory."""
    user = parse_user_ref(ref)
    principal = resolve_principal(session, config, user.platform, user.user_id)
    if not principal.in_directory:
        raise NotFoundError(
            f"user {user} is not in the synced directory; check the id or run `tablescout directory sync`"
        )
    return user


def issue(
    session: Session,
    config: ConfigFile,
    *,
    user: str,
    name: str,
    expires: str,
    rate_per_minute: int,
    created_by: str,
) -> IssuedToken:
    """A new token for directory user `user`; the caller commits and shows `secret` once."""
    if not 1 <= rate_per_minute <= MAX_RATE_PER_MINUTE:
        raise ConfigError(f"--rate must be between 1 and {MAX_RATE_PER_MINUTE} requests a minute")
    if not name.strip() or len(name) > 200:
        raise ConfigError("--name must be 1 to 200 characters")
    ref = directory_user(session, config, user)
    secret = PREFIX + secrets.token_urlsafe(32)
    row = api_tokens.add(
        session,
        user=ref,
        name=name.strip(),
        token_hash=digest(secret),
        rate_per_minute=rate_per_minute,
        expires_at=parse_expiry(expires, utcnow()),
        created_by=created_by,
    )
    return IssuedToken(row, secret)


def bearer(header: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header."""
    if not header:
        raise TokenRefused("send the API token as `Authorization: Bearer <token>`")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise TokenRefused("send the API token as `Authorization: Bearer <token>`")
    return token.strip()


def authenticate(session: Session, config: ConfigFile, secret: str) -> Caller:
    """The caller a presented token stands for, after recording its use; TokenRefused when it may not be used."""
    if not _TOKEN.match(secret):
        raise TokenRefused("this is not a tablescout API token")
    row = api_tokens.by_hash(session, digest(secret))
    if row is None:
        raise TokenRefused("this API token is not known; ask an admin for one (`tablescout token create`)")
    now = utcnow()
    if row.revoked_at is not None:
        raise TokenRefused("this API token was revoked")
    if row.expires_at is not None and row.expires_at <= now:
        raise TokenRefused("this API token has expired; ask an admin for a new one")
    principal = resolve_principal(session, config, row.user_platform, row.user_id)
    if not principal.in_directory:
        raise TokenRefused("this API token's user is no longer in the directory")
    api_tokens.touch(session, row.id, now, TOUCH_EVERY)
    return Caller(row.id, UserRef(row.user_platform, row.user_id), row.rate_per_minute)
