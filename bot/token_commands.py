"""API tokens managed in chat (docs/api.md): an admin writes `token create [NAME]`, `token list` or `token revoke ID`
to the bot in a direct message, as an operator runs `tablescout token …` at the command line.

A token works like a password, so the commands answer only in a direct message (in a channel everyone would read
it), only for admins (a role with `admin: true`), and a token made in chat acts as the admin who asked for it. The
reply goes straight back to the chat and is never stored: no turn, no outbox row, no log line holds the token; the
store keeps its hash (`core.access.tokens`). Any other message that starts with "token" is a question as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy.orm import Session

from core.access.permissions import resolve_principal
from core.access.tokens import DEFAULT_EXPIRY, DEFAULT_RATE_PER_MINUTE, issue
from core.config.file import ConfigFile
from core.errors import TablescoutError
from core.store.models import ApiToken
from core.store.models.base import utcnow
from core.store.repositories import api_tokens

_COMMAND = re.compile(
    r"^(?:api\s+)?tokens?(?:\s+(?P<verb>create|new|list|revoke|help)\b(?P<rest>.*))?[.!?]?$", re.I | re.S
)
#: The name of a token made in chat when the admin gives none.
DEFAULT_NAME = "chat"
MAX_NAME = 200
USAGE = (
    "API tokens let a program or an MCP client ask tablescout as you. In this direct message: "
    "`token create NAME` makes one (shown once, expires in 90 days), `token list` shows them, "
    "`token revoke ID` ends one."
)
IN_PRIVATE = (
    "Manage API tokens in a direct message with me: a token works like a password, and this conversation is not "
    "private."
)
ADMINS_ONLY = (
    "Only tablescout admins can manage API tokens. Ask an admin for one; an operator can also run "
    "`tablescout token create`."
)
UNAVAILABLE = "API tokens cannot be managed from this chat server; an operator can run `tablescout token create`."


@dataclass(frozen=True)
class TokenCommand:
    """A token command as written: `verb` is create, list, revoke or help; `argument` what followed it."""

    verb: str
    argument: str


@dataclass(frozen=True)
class Asker:
    """Who wrote the command, and where."""

    platform: str
    user_id: str
    private: bool


def parse(text: str) -> TokenCommand | None:
    """The token command `text` is (the message without the bot mention), or None when it is no token command."""
    match = _COMMAND.match(text.strip())
    if match is None:
        return None
    verb = (match["verb"] or "help").lower()
    return TokenCommand("create" if verb == "new" else verb, (match["rest"] or "").strip())


def answer(session: Session, config: ConfigFile | None, asker: Asker, command: TokenCommand) -> str:
    """The reply to `command` (module doc); the caller commits, then posts it and stores nothing of it."""
    if config is None:
        return UNAVAILABLE
    if not asker.private:
        return IN_PRIVATE
    if not resolve_principal(session, config, asker.platform, asker.user_id).is_admin:
        return ADMINS_ONLY
    try:
        if command.verb == "create":
            return _create(session, config, asker, command.argument)
        if command.verb == "list":
            return _listed(api_tokens.all_tokens(session, include_revoked=False))
        if command.verb == "revoke":
            return _revoke(session, command.argument)
    except TablescoutError as exc:
        return f"I could not do that: {exc}."
    return USAGE


def _create(session: Session, config: ConfigFile, asker: Asker, written: str) -> str:
    name = written.strip("\"'“” .!?") or DEFAULT_NAME
    if len(name) > MAX_NAME:
        return f"A token's name takes up to {MAX_NAME} characters; write a shorter one after `token create`."
    issued = issue(
        session,
        config,
        user=f"{asker.platform}:{asker.user_id}",
        name=name,
        expires=DEFAULT_EXPIRY,
        rate_per_minute=DEFAULT_RATE_PER_MINUTE,
        created_by=f"{asker.platform}:{asker.user_id}",
    )
    row = issued.row
    expiry = f"expires {row.expires_at:%Y-%m-%d}" if row.expires_at else "never expires"
    return (
        f'API token #{row.id} "{row.name}": it acts as you, {expiry}, {row.rate_per_minute} requests a minute.\n'
        f"`{issued.secret}`\n"
        f"It is shown only now: copy it into a secret store. `token revoke {row.id}` ends it."
    )


def _listed(rows: list[ApiToken]) -> str:
    if not rows:
        return "There are no API tokens. `token create NAME` makes one that acts as you."
    lines = []
    for row in rows:
        expiry = f"expires {row.expires_at:%Y-%m-%d}" if row.expires_at else "never expires"
        used = f"last used {row.last_used_at:%Y-%m-%d %H:%M} UTC" if row.last_used_at else "never used"
        lines.append(
            f'#{row.id} "{row.name}" acts as {row.user_platform}:{row.user_id}, made {row.created_at:%Y-%m-%d}, '
            f"{expiry}, {used}"
        )
    return "API tokens:\n" + "\n".join(lines)


def _revoke(session: Session, argument: str) -> str:
    written = argument.lstrip("#").strip()
    if not written.isdigit():
        return "Say which token to revoke by its number, for example `token revoke 3` (`token list` shows them)."
    row = api_tokens.revoke(session, int(written), utcnow())
    if row is None:
        return f"There is no token #{written}; `token list` shows them."
    return f"Revoked token #{row.id} ({row.user_platform}:{row.user_id}): it is refused from its next request on."
