"""`tablescout token create|list|revoke` as an operator runs them (issue 36 item 1): the token printed once and
only its hash stored, the list's keys, revoking, and refusals for users outside the directory and bad lifetimes."""

from __future__ import annotations

import json
import subprocess

from sqlalchemy import select

from core.access.tokens import digest
from core.store.models import ApiToken
from tests.api.world import ApiWorld
from tests.support import run_cli


def cli(world: ApiWorld, *args: str) -> subprocess.CompletedProcess[str]:
    settings = world.installation.settings
    assert settings.database_url is not None
    return run_cli(
        settings.home, "token", *args, env={"TABLESCOUT_DATABASE_URL": settings.database_url.get_secret_value()}
    )


def test_a_token_is_created_listed_and_revoked(api_world: ApiWorld) -> None:
    made = cli(api_world, "create", "--user", "slack:U_CLERK", "--name", "portal", "--expires", "12h", "--json")
    assert made.returncode == 0, made.stderr
    shown = json.loads(made.stdout)
    secret = shown.pop("token")
    assert secret.startswith("tsk_")
    with api_world.installation.store.transaction() as session:
        row = session.scalars(select(ApiToken).where(ApiToken.id == shown["id"])).one()
        assert row.token_hash == digest(secret)
        assert secret not in json.dumps([str(v) for v in vars(row).values()]), "only the hash is stored"

    listed = json.loads(cli(api_world, "list", "--json").stdout)
    mine = next(t for t in listed if t["id"] == shown["id"])
    assert set(mine) >= {"id", "user", "name", "created", "expires", "last_used"}
    assert (mine["user"], mine["name"], mine["last_used"], mine["revoked"]) == ("slack:U_CLERK", "portal", None, None)
    assert secret not in json.dumps(listed)

    revoked = cli(api_world, "revoke", str(shown["id"]))
    assert revoked.returncode == 0, revoked.stderr
    everything = json.loads(cli(api_world, "list", "--all", "--json").stdout)
    assert next(t for t in everything if t["id"] == shown["id"])["revoked"] is not None


def test_bad_requests_are_refused_with_one_line_and_nothing_stored(api_world: ApiWorld) -> None:
    with api_world.installation.store.transaction() as session:
        before = len(session.scalars(select(ApiToken.id)).all())
    for args, words in [
        (("create", "--user", "slack:U_NOBODY"), "not in the synced directory"),
        (("create", "--user", "slack:U_CLERK", "--expires", "soon"), "--expires takes a duration"),
        (("revoke", "999999"), "there is no token #999999"),
    ]:
        done = cli(api_world, *args)
        assert done.returncode == 1, args
        assert words in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    with api_world.installation.store.transaction() as session:
        assert len(session.scalars(select(ApiToken.id)).all()) == before
