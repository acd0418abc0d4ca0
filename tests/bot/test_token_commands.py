"""API tokens managed in chat (bot/token_commands.py): through the intake every chat message goes through, on a real
store, with the configuration's admin role and the synced directory deciding who may."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import pytest
from ruamel.yaml import YAML
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from bot.intake import IncomingMessage, accept
from bot.token_commands import ADMINS_ONLY, IN_PRIVATE, UNAVAILABLE, TokenCommand, parse
from core.access.tokens import TokenRefused, authenticate
from core.config.file import ConfigFile
from core.store.models import ApiToken, OutboxMessage, Turn
from core.store.repositories import directory

CONFIG = ConfigFile.model_validate(
    YAML(typ="safe").load(
        """\
roles:
  staff:
    grants:
      - database: erp
  admin:
    admin: true
    grants:
      - database: "*"
groups:
  - {platform: slack, group: S_ADMINS, roles: [admin]}
  - {platform: slack, group: S_SALES, roles: [staff]}
"""
    )
)
SECRET = re.compile(r"`(tsk_[A-Za-z0-9_-]{43})`")


@pytest.fixture
def people(session: Session) -> Session:
    """U_ADMIN in the admins' group, U_SALES in sales: both synced from the directory."""
    now = datetime.now(UTC)
    for user, group in (("U_ADMIN", "S_ADMINS"), ("U_SALES", "S_SALES")):
        user_pk = directory.upsert_user(session, platform="slack", user_id=user, synced_at=now)
        group_pk = directory.upsert_group(session, platform="slack", group_id=group, synced_at=now)
        directory.replace_members(session, group_pk, [user_pk])
    session.flush()
    return session


def say(session: Session, text: str, *, user: str = "U_ADMIN", private: bool = True) -> str | None:
    message = IncomingMessage(
        platform="slack",
        event_id=f"Ev{uuid.uuid4().hex[:10]}",
        workspace_id="T1",
        channel_id="D_ADMIN" if private else "C_SALES",
        thread_id="",
        user_id=user,
        text=f"<@U0BOT1> {text}",
        private=private,
        bot_user_id="U0BOT1",
    )
    accepted = accept(session, message, CONFIG)
    assert accepted.turn_id is None
    return accepted.reply


def test_token_commands_are_told_from_questions() -> None:
    assert parse("token create billing portal") == TokenCommand("create", "billing portal")
    assert parse("Token new") == TokenCommand("create", "")
    assert parse("tokens") == TokenCommand("help", "")
    assert parse("api tokens list") == TokenCommand("list", "")
    assert parse("token revoke #3") == TokenCommand("revoke", "#3")
    for question in ["tokens sold by month last year", "token usage per region", "how many tokens were revoked?"]:
        assert parse(question) is None


def test_an_admin_makes_lists_and_revokes_a_token_in_a_direct_message(people: Session) -> None:
    turns_before = people.scalar(select(func.count()).select_from(Turn))
    jobs_before = people.scalar(select(func.count()).select_from(OutboxMessage))
    reply = say(people, "token create billing portal.")
    assert reply is not None
    found = SECRET.search(reply)
    assert found is not None
    secret = found.group(1)
    assert "API token #" in reply
    assert '"billing portal": it acts as you' in reply
    caller = authenticate(people, CONFIG, secret)
    assert (caller.user.platform, caller.user.user_id) == ("slack", "U_ADMIN")
    # the token is in the reply alone: no turn, no job, and the store holds its hash, never the token
    assert people.scalar(select(func.count()).select_from(Turn)) == turns_before
    assert people.scalar(select(func.count()).select_from(OutboxMessage)) == jobs_before
    dump = people.execute(text("SELECT row_to_json(t)::text FROM api_tokens t")).scalars().all()
    assert all(secret not in row for row in dump)
    listed = say(people, "token list")
    assert listed is not None
    assert f'#{caller.token_id} "billing portal" acts as slack:U_ADMIN' in listed
    assert secret not in listed
    assert say(people, f"token revoke {caller.token_id}") == (
        f"Revoked token #{caller.token_id} (slack:U_ADMIN): it is refused from its next request on."
    )
    with pytest.raises(TokenRefused, match="revoked"):
        authenticate(people, CONFIG, secret)
    assert f"#{caller.token_id} " not in (say(people, "token list") or "")


def test_a_token_is_never_made_in_a_channel_or_for_someone_who_is_not_an_admin(people: Session) -> None:
    tokens_before = people.scalar(select(func.count()).select_from(ApiToken))
    assert say(people, "token create", private=False) == IN_PRIVATE
    assert say(people, "token create", user="U_SALES") == ADMINS_ONLY
    assert say(people, "token list", user="U_SALES") == ADMINS_ONLY
    assert say(people, "token create", user="U_STRANGER") == ADMINS_ONLY
    assert people.scalar(select(func.count()).select_from(ApiToken)) == tokens_before
    # a chat server that was given no configuration cannot say who is an admin
    message = IncomingMessage("slack", "Ev-noconfig", "T1", "D1", "", "U_ADMIN", "token create", private=True)
    assert accept(people, message).reply == UNAVAILABLE


def test_unclear_commands_get_a_sentence_and_change_nothing(people: Session) -> None:
    tokens_before = people.scalar(select(func.count()).select_from(ApiToken))
    assert "`token create NAME` makes one" in (say(people, "tokens") or "")
    assert "by its number" in (say(people, "token revoke the old one") or "")
    assert say(people, "token revoke 999999") == "There is no token #999999; `token list` shows them."
    too_long = say(people, "token create " + "x" * 300) or ""
    assert too_long == "A token's name takes up to 200 characters; write a shorter one after `token create`."
    assert people.scalar(select(func.count()).select_from(ApiToken)) == tokens_before
