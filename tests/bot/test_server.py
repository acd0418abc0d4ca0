"""The bot server's configuration checks, its health route, and the `serve` command's errors."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import sessionmaker

from bot.server import BotServer
from core.config.settings import Settings
from core.errors import ConfigError
from core.store.database import Store
from tests.fakes.bot_server import ServerThread
from tests.fakes.slack_server import FakeSlack
from tests.redis_server import redis_url
from tests.support import isolated_settings, run_cli

REDIS_URL = redis_url(13)


def nothing(_name: str, _args: Any) -> None:
    raise AssertionError("nothing should be published")


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        yield server


def slack_settings(home: Path, slack: FakeSlack, **extra: Any) -> Settings:
    values = {
        "redis_url": REDIS_URL,
        "slack_bot_token": slack.token,
        "slack_signing_secret": "s3cret",
        "slack_api_url": slack.url,
    }
    return isolated_settings(home, **(values | extra))


def test_nothing_configured_is_refused_with_what_to_set(store: Store, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nothing to serve: set SLACK_BOT_TOKEN"):
        BotServer(isolated_settings(tmp_path, redis_url=REDIS_URL), store)


def test_the_server_needs_redis(store: Store, tmp_path: Path, slack: FakeSlack) -> None:
    with pytest.raises(ConfigError, match="TABLESCOUT_REDIS_URL"):
        BotServer(slack_settings(tmp_path, slack, redis_url=None), store)


def test_slack_over_http_needs_the_signing_secret(store: Store, tmp_path: Path, slack: FakeSlack) -> None:
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET"):
        BotServer(slack_settings(tmp_path, slack, slack_signing_secret=None), store, send=nothing)


def test_socket_mode_needs_the_app_token(store: Store, tmp_path: Path, slack: FakeSlack) -> None:
    with pytest.raises(ConfigError, match="SLACK_APP_TOKEN"):
        BotServer(slack_settings(tmp_path, slack), store, slack_socket_mode=True, send=nothing)


def test_a_refused_bot_token_is_a_clear_error(store: Store, tmp_path: Path, slack: FakeSlack) -> None:
    with pytest.raises(ConfigError, match="Slack refused the bot token") as caught:
        BotServer(slack_settings(tmp_path, slack, slack_bot_token="xoxb-wrong"), store, send=nothing)
    assert "xoxb-wrong" not in str(caught.value)


def test_teams_without_an_app_id_is_not_served_outside_tests(store: Store, tmp_path: Path) -> None:
    settings = isolated_settings(tmp_path, redis_url=REDIS_URL, teams_app_password="p")
    with pytest.raises(ConfigError, match="nothing to serve"):
        BotServer(settings, store, send=nothing)
    with pytest.raises(ConfigError, match="TEAMS_APP_PASSWORD is empty"):
        BotServer(isolated_settings(tmp_path, redis_url=REDIS_URL, teams_app_id="app"), store, send=nothing)


def _get(url: str) -> tuple[int, dict[str, Any]]:
    import json
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - the local test server
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_healthz_reports_the_store_and_the_surfaces(store: Store, tmp_path: Path, slack: FakeSlack) -> None:
    bot = BotServer(slack_settings(tmp_path, slack), store, send=nothing)
    server = ServerThread(bot.web_app()).start()
    try:
        status, body = _get(f"{server.url}/healthz")
    finally:
        server.stop()
    assert status == 200
    config = body.pop("config")
    assert body == {"status": "ok", "store": "ok", "slack": "http", "teams": "off"}
    assert config["state"] == "ok"
    assert config["path"] == str(tmp_path / "tablescout.yaml")


def test_healthz_says_when_an_edit_of_the_configuration_is_invalid(
    store: Store, tmp_path: Path, slack: FakeSlack
) -> None:
    config = tmp_path / "tablescout.yaml"
    config.write_text("roles:\n  staff: {}\ndefault_role: staff\n")
    bot = BotServer(slack_settings(tmp_path, slack), store, send=nothing)
    server = ServerThread(bot.web_app()).start()
    try:
        assert _get(f"{server.url}/healthz")[1]["config"]["state"] == "ok"
        config.write_text("roles:\n  staff: {}\ndefault_role: staf\n")
        status, body = _get(f"{server.url}/healthz")
        config.write_text("roles:\n  staff: {}\ndefault_role: staff\n")
        _, fixed = _get(f"{server.url}/healthz")
    finally:
        server.stop()
    assert status == 200  # still serving, on the last valid configuration
    assert body["status"] == "degraded"
    assert body["config"]["state"] == "invalid"
    assert "default_role: role 'staf' is not defined under roles" in body["config"]["error"]
    assert fixed["status"] == "ok"
    assert fixed["config"]["state"] == "ok"


def test_healthz_is_503_when_the_store_is_unreachable(tmp_path: Path, slack: FakeSlack) -> None:
    engine = create_engine("postgresql+psycopg://nobody@127.0.0.1:1/none", connect_args={"connect_timeout": 2})
    dead = Store(engine=engine, sessions=sessionmaker(engine))
    bot = BotServer(slack_settings(tmp_path, slack), dead, send=nothing)
    server = ServerThread(bot.web_app()).start()
    try:
        status, body = _get(f"{server.url}/healthz")
    finally:
        server.stop()
        asyncio.set_event_loop(None)
    assert status == 503
    assert body["store"] == "unreachable"


def test_the_serve_command_says_what_is_missing(tmp_path: Path, store: Store) -> None:
    """The HTTP API is always served, so no chat platform is needed; Redis is (turns go to the workers)."""
    url = store.engine.url.render_as_string(hide_password=False)
    result = run_cli(tmp_path, "serve", "--port", "3999", env={"TABLESCOUT_DATABASE_URL": url})
    assert result.returncode == 1
    assert "set TABLESCOUT_REDIS_URL" in result.stderr


def test_nothing_to_serve_without_a_platform_or_another_surface(tmp_path: Path, store: Store) -> None:
    with pytest.raises(ConfigError, match="nothing to serve"):
        BotServer(isolated_settings(tmp_path, redis_url=REDIS_URL), store, send=nothing)


def test_platforms_limit_what_is_served(store: Store, tmp_path: Path, slack: FakeSlack) -> None:
    both = slack_settings(tmp_path, slack, teams_app_id="app", teams_app_password="p")
    assert BotServer(both, store, send=nothing).surfaces() == {"slack": "http", "teams": "on"}
    assert BotServer(both, store, platforms=["teams"], send=nothing).surfaces() == {"slack": "off", "teams": "on"}
    only_slack = BotServer(both, store, platforms=["slack"], send=nothing)
    assert only_slack.surfaces() == {"slack": "http", "teams": "off"}
    routes = {route.resource.canonical for route in only_slack.web_app().router.routes()}  # type: ignore[union-attr]
    assert routes == {"/healthz", "/slack/events"}


def test_a_named_platform_must_be_configured(store: Store, tmp_path: Path, slack: FakeSlack) -> None:
    teams_only = isolated_settings(tmp_path, redis_url=REDIS_URL, teams_app_id="app", teams_app_password="p")
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN"):
        BotServer(teams_only, store, platforms=["slack"], send=nothing)
    with pytest.raises(ConfigError, match="unknown platform"):
        BotServer(teams_only, store, platforms=["discord"], send=nothing)
    with pytest.raises(ConfigError, match="Slack is not among the platforms"):
        BotServer(teams_only, store, platforms=["teams"], slack_socket_mode=True, send=nothing)
