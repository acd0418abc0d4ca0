"""The Slack and Teams app manifests in deploy/chat-apps match what the bot handles and the calls it makes."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from bot.slack.assistant import ASSISTANT_EVENTS
from bot.slack.events import REMEMBER_SHORTCUT
from tests.support import REPO

APPS = REPO / "deploy" / "chat-apps"


def slack_manifest() -> dict[str, Any]:
    loaded: dict[str, Any] = YAML(typ="safe").load((APPS / "slack-manifest.yaml").read_text())
    return loaded


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_slack_manifest_subscribes_to_what_the_bot_handles() -> None:
    manifest = slack_manifest()
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert {"app_mention", "message.im", "message.channels", "message.groups"} <= events
    assert set(ASSISTANT_EVENTS) <= events
    view = manifest["features"]["assistant_view"]
    assert view["assistant_description"].strip()
    assert 1 <= len(view["suggested_prompts"]) <= 4
    assert all(p["title"].strip() and p["message"].strip() for p in view["suggested_prompts"])
    [shortcut] = manifest["features"]["shortcuts"]
    assert (shortcut["type"], shortcut["callback_id"]) == ("message", REMEMBER_SHORTCUT)
    for url in (
        manifest["settings"]["event_subscriptions"]["request_url"],
        manifest["settings"]["interactivity"]["request_url"],
    ):
        assert url.startswith("https://")
        assert url.endswith("/slack/events")


def test_slack_manifest_grants_the_scopes_of_every_call_and_event() -> None:
    scopes = set(slack_manifest()["oauth_config"]["scopes"]["bot"])
    needed = {
        "app_mentions:read",  # app_mention events
        "assistant:write",  # assistant.threads.setStatus / setTitle / setSuggestedPrompts, assistant thread events
        "channels:history",  # message.channels: follow-ups in public channel threads
        "groups:history",  # message.groups: the same in private channels
        "im:history",  # message.im: direct messages
        "chat:write",  # chat.postMessage, chat.update, chat.startStream/appendStream/stopStream: status and answer
        "files:write",  # files.getUploadURLExternal / completeUploadExternal: result CSVs
        "commands",  # the Remember this message shortcut
        "usergroups:read",  # usergroups.list and usergroups.users.list: directory sync
        "users.profile:read",  # users.profile.get and team.profile.get: user attributes for row filters
    }
    assert scopes == needed


def test_teams_manifest_is_a_complete_app_package() -> None:
    manifest = json.loads((APPS / "teams" / "manifest.json").read_text())
    [bot] = manifest["bots"]
    assert set(bot["scopes"]) == {"personal", "team", "groupChat"}
    assert bot["botId"] == manifest["id"]
    assert len(manifest["description"]["short"]) <= 80
    assert len(manifest["name"]["short"]) <= 30
    assert png_size(APPS / "teams" / manifest["icons"]["color"]) == (192, 192)
    assert png_size(APPS / "teams" / manifest["icons"]["outline"]) == (32, 32)
