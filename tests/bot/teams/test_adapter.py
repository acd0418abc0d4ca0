"""The Teams adapter with real botbuilder: inbound authentication and reading, proactive replies through a fake
Bot Framework connector, retries without duplicates."""

from __future__ import annotations

import asyncio
import base64
import time
from pathlib import Path
from typing import Any

import jwt
import pytest

from bot.teams.activity import TeamsMessage
from bot.teams.adapter import build_adapter, mention_text, parse_activity, process_inbound
from bot.teams.poster import TeamsDeliveryError, TeamsPoster
from core.answer.model import Answer, Chart
from core.config.settings import Settings
from core.errors import ConfigError
from tests.fakes.bot_framework_keys import FakeBotFrameworkKeys
from tests.fakes.teams_connector import FakeTeamsConnector
from tests.support import isolated_settings

BOT_ID = "28:bot-app"
ROOT_ID = "1700000000001"
CHANNEL_CONVERSATION = f"19:general@thread.tacv2;messageid={ROOT_ID}"


def dev_settings(home: Path) -> Settings:
    return isolated_settings(home)


def production_settings(home: Path) -> Settings:
    return isolated_settings(home, teams_app_id="00000000-0000-0000-0000-00000000a11d", teams_app_password="secret")


def channel_activity(service_url: str, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "message",
        "id": ROOT_ID,
        "timestamp": "2024-05-01T09:00:00.000Z",
        "serviceUrl": service_url,
        "channelId": "msteams",
        "from": {"id": "29:user-kim", "name": "Kim", "aadObjectId": "aad-kim"},
        "conversation": {
            "id": CHANNEL_CONVERSATION,
            "conversationType": "channel",
            "isGroup": True,
            "tenantId": "tenant-1",
        },
        "recipient": {"id": BOT_ID, "name": "tablescout"},
        "text": "<at>tablescout</at> how many orders shipped to <at>Lee</at>'s region?",
        "entities": [
            {"type": "mention", "text": "<at>tablescout</at>", "mentioned": {"id": BOT_ID, "name": "tablescout"}},
            {"type": "mention", "text": "<at>Lee</at>", "mentioned": {"id": "29:user-lee", "name": "Lee"}},
        ],
        "channelData": {"tenant": {"id": "tenant-1"}, "channel": {"id": "19:general@thread.tacv2"}},
    }
    body.update(overrides)
    return body


def personal_activity(service_url: str) -> dict[str, Any]:
    return channel_activity(
        service_url,
        id="1700000000777",
        conversation={"id": "a:1personal-chat", "conversationType": "personal", "tenantId": "tenant-1"},
        text="top customers this year @billing",
        entities=[],
    )


def receive(
    adapter: Any, body: dict[str, Any], auth_header: str = ""
) -> tuple[TeamsMessage | None, list[TeamsMessage]]:
    received: list[TeamsMessage] = []

    async def on_message(message: TeamsMessage) -> None:
        received.append(message)

    returned = asyncio.run(process_inbound(adapter, body, auth_header, on_message))
    return returned, received


# --- inbound ---------------------------------------------------------------------------------------------------


def test_empty_app_id_is_refused_outside_testing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TABLESCOUT_TEAMS_APP_ID"):
        build_adapter(dev_settings(tmp_path), testing=False)
    with pytest.raises(ConfigError, match="PASSWORD"):
        build_adapter(isolated_settings(tmp_path, teams_app_id="app"), testing=False)
    with pytest.raises(ConfigError):
        TeamsPoster(dev_settings(tmp_path))


def unsigned_token(issuer: str) -> str:
    now = int(time.time())
    claims = {"iss": issuer, "aud": "00000000-0000-0000-0000-00000000a11d", "iat": now, "exp": now + 600}
    return jwt.encode(claims, "not-the-bot-framework-key-not-the-bot-framework-key", algorithm="HS256")


@pytest.mark.parametrize(
    "auth_header",
    [
        "",
        "Bearer not-a-jwt",
        "Basic dXNlcjpwYXNz",
        f"Bearer {unsigned_token('https://attacker.example')}",
    ],
    ids=["missing", "malformed", "wrong-scheme", "foreign-issuer"],
)
@pytest.mark.parametrize("testing", [False, True], ids=["production", "testing-with-app-id"])
def test_activity_without_valid_token_is_refused(
    tmp_path: Path, fake_teams_connector: FakeTeamsConnector, auth_header: str, testing: bool
) -> None:
    adapter = build_adapter(production_settings(tmp_path), testing=testing)
    received: list[TeamsMessage] = []

    async def on_message(message: TeamsMessage) -> None:
        received.append(message)

    body = channel_activity(fake_teams_connector.url)
    with pytest.raises(PermissionError, match="not authenticated"):
        asyncio.run(process_inbound(adapter, body, auth_header, on_message))
    assert received == []
    assert fake_teams_connector.requests == []


@pytest.mark.parametrize(
    ("auth_header", "reason"),
    [
        ("", "the request has no Authorization header with the Bot Framework's bearer token"),
        ("Basic dXNlcjpwYXNz", "the Authorization header is not a bearer token"),
        ("Bearer", "the Authorization header is not a bearer token"),
        ("Bearer not-a-jwt", "the bearer token is not a valid Bot Framework token for this bot"),
        (f"Bearer {unsigned_token('https://attacker.example')}", "the bearer token is not a valid Bot Framework"),
    ],
    ids=["missing", "wrong-scheme", "empty-bearer", "malformed", "foreign-issuer"],
)
@pytest.mark.parametrize("keys_elsewhere", [False, True], ids=["public-cloud-keys", "configured-keys"])
def test_a_refusal_says_why_in_plain_words(
    tmp_path: Path, fake_teams_connector: FakeTeamsConnector, auth_header: str, reason: str, keys_elsewhere: bool
) -> None:
    async def on_message(message: TeamsMessage) -> None:
        raise AssertionError("a refused activity reached on_message")

    with FakeBotFrameworkKeys() as keys:
        settings = production_settings(tmp_path)
        if keys_elsewhere:
            settings = settings.model_copy(update={"teams_openid_metadata_url": keys.metadata_url})
        adapter = build_adapter(settings, testing=False)
        with pytest.raises(PermissionError) as caught:
            asyncio.run(process_inbound(adapter, channel_activity(fake_teams_connector.url), auth_header, on_message))
    message = str(caught.value)
    assert message.startswith("Teams activity not authenticated: ")
    assert reason in message
    assert "NoneType" not in message
    assert "\n" not in message


def test_test_activity_reaches_on_message_with_mention_stripped(
    tmp_path: Path, fake_teams_connector: FakeTeamsConnector
) -> None:
    adapter = build_adapter(dev_settings(tmp_path), testing=True)
    returned, received = receive(adapter, channel_activity(fake_teams_connector.url))
    assert received == [returned]
    message = received[0]
    assert message.text == "how many orders shipped to <at>Lee</at>'s region?"
    assert message.raw_text.startswith("<at>tablescout</at>")
    assert message.activity_id == ROOT_ID
    assert message.conversation_id == "19:general@thread.tacv2"
    assert message.thread_id == ROOT_ID
    assert not message.personal
    assert message.user_id == "29:user-kim"
    assert message.user_aad_object_id == "aad-kim"
    assert message.user_name == "Kim"
    assert message.tenant_id == "tenant-1"
    reference = message.reference
    assert reference["serviceUrl"] == fake_teams_connector.url
    assert reference["conversation"]["id"] == CHANNEL_CONVERSATION
    assert reference["activityId"] == ROOT_ID
    assert reference["bot"]["id"] == BOT_ID
    assert reference["channelId"] == "msteams"
    assert fake_teams_connector.requests == []  # reading a message sends nothing


def test_thread_reply_and_personal_chat(tmp_path: Path, fake_teams_connector: FakeTeamsConnector) -> None:
    adapter = build_adapter(dev_settings(tmp_path), testing=True)
    reply = channel_activity(fake_teams_connector.url, id="1700000000555", replyToId=ROOT_ID)
    _, (in_thread,) = receive(adapter, reply)
    assert in_thread.thread_id == ROOT_ID
    assert in_thread.activity_id == "1700000000555"
    _, (personal,) = receive(adapter, personal_activity(fake_teams_connector.url))
    assert personal.personal
    assert personal.thread_id is None
    assert personal.conversation_id == "a:1personal-chat"
    assert personal.text == "top customers this year @billing"


def test_other_activities_and_bad_bodies(tmp_path: Path, fake_teams_connector: FakeTeamsConnector) -> None:
    adapter = build_adapter(dev_settings(tmp_path), testing=True)
    update = channel_activity(fake_teams_connector.url, type="conversationUpdate", text=None, entities=[])
    returned, received = receive(adapter, update)
    assert returned is None
    assert received == []
    with pytest.raises(ValueError, match="not a Bot Framework activity"):
        receive(adapter, {"text": "hello"})


def test_mention_text_only_removes_the_bot() -> None:
    activity = parse_activity(
        channel_activity("https://smba.example/", text="<at>tablescout</at>  orders\u00a0 by <at>Lee</at>  ")
    )
    assert mention_text(activity, BOT_ID) == "orders by <at>Lee</at>"
    assert mention_text(activity, "28:someone-else") == "<at>tablescout</at> orders by <at>Lee</at>"
    name_with_regex = channel_activity(
        "https://smba.example/",
        text="<at>Table.Scout (prod)</at> orders",
        entities=[{"type": "mention", "text": "<at>Table.Scout (prod)</at>", "mentioned": {"id": BOT_ID, "name": "x"}}],
    )
    assert mention_text(parse_activity(name_with_regex), BOT_ID) == "orders"


# --- outbound --------------------------------------------------------------------------------------------------


def answer_payload() -> Answer:
    return Answer.from_stored(
        {
            "status": "answered",
            "answer": "42 orders shipped to Busan.",
            "rounds": 2,
            "tables_used": ["erp.ORD_MST"],
            "sql": [{"database": "erp", "sql": "SELECT COUNT(*) FROM ORD_MST", "columns": ["n"], "rows": [[42]]}],
            "notes_saved": [],
        }
    )


def stored_reference(tmp_path: Path, connector: FakeTeamsConnector) -> dict[str, Any]:
    """The reference as the inbound half stores it, from a real inbound activity."""
    adapter = build_adapter(dev_settings(tmp_path), testing=True)
    _, (message,) = receive(adapter, channel_activity(connector.url))
    return message.reference


def poster(tmp_path: Path) -> TeamsPoster:
    return TeamsPoster(dev_settings(tmp_path), testing=True, backoff_base_s=0.01)


def card_of(activity: dict[str, Any]) -> dict[str, Any]:
    (attachment,) = activity["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    content: dict[str, Any] = attachment["content"]
    return content


def test_status_then_answer_card_in_place(tmp_path: Path, fake_teams_connector: FakeTeamsConnector) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    teams = poster(tmp_path)

    async def flow() -> tuple[str, str]:
        status_id = await teams.post_status(reference, "Searching tables\u2026")
        await teams.update_status(reference, status_id, "Running SQL on erp\u2026")
        return status_id, await teams.post_answer(reference, status_id, answer_payload())

    status_id, answer_id = asyncio.run(flow())
    assert answer_id == status_id
    assert fake_teams_connector.created == [status_id]  # one message in the thread: the answer
    post, status_update, answer_update = fake_teams_connector.requests
    assert (post.method, post.conversation_id, post.activity_id) == ("POST", CHANNEL_CONVERSATION, ROOT_ID)
    assert post.body["text"] == "\u23f3 Searching tables\u2026"
    assert post.body["replyToId"] == ROOT_ID
    assert post.body["from"]["id"] == BOT_ID
    assert (status_update.method, status_update.activity_id) == ("PUT", status_id)
    assert status_update.body["text"] == "\u23f3 Running SQL on erp\u2026"
    assert (answer_update.method, answer_update.activity_id) == ("PUT", status_id)
    final = fake_teams_connector.messages[status_id]
    card = card_of(final)
    assert card["type"] == "AdaptiveCard"
    assert card["version"] == "1.4"
    assert card["body"][0]["text"] == "42 orders shipped to Busan."
    assert final["summary"] == "42 orders shipped to Busan."
    assert "Authorization" not in post.headers  # test mode: no app id, no outbound token


def test_throttled_send_is_retried_once_delivered(tmp_path: Path, fake_teams_connector: FakeTeamsConnector) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    fake_teams_connector.fail_next(429, times=1, retry_after=0.05)
    started = time.monotonic()
    answer_id = asyncio.run(poster(tmp_path).post_answer(reference, None, answer_payload()))
    assert time.monotonic() - started >= 0.05  # Retry-After honoured
    assert fake_teams_connector.created == [answer_id]
    assert [(r.method, r.status) for r in fake_teams_connector.requests] == [("POST", 429), ("POST", 201)]
    assert card_of(fake_teams_connector.messages[answer_id])["type"] == "AdaptiveCard"


def test_update_retries_gateway_and_conflict_errors(tmp_path: Path, fake_teams_connector: FakeTeamsConnector) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    teams = poster(tmp_path)
    status_id = asyncio.run(teams.post_status(reference, "Searching tables\u2026"))
    fake_teams_connector.fail_next(502, method="PUT")
    fake_teams_connector.fail_next(412, method="PUT")
    fake_teams_connector.fail_next(504, method="PUT")
    assert asyncio.run(teams.post_answer(reference, status_id, answer_payload())) == status_id
    puts = [r.status for r in fake_teams_connector.requests if r.method == "PUT"]
    assert puts == [502, 412, 504, 200]
    assert fake_teams_connector.created == [status_id]
    assert card_of(fake_teams_connector.messages[status_id])["type"] == "AdaptiveCard"


def test_persistent_throttling_gives_up_after_four_tries(
    tmp_path: Path, fake_teams_connector: FakeTeamsConnector
) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    teams = poster(tmp_path)
    status_id = asyncio.run(teams.post_status(reference, "Searching tables\u2026"))
    fake_teams_connector.fail_next(429, times=10, method="PUT")
    with pytest.raises(TeamsDeliveryError) as caught:
        asyncio.run(teams.update_status(reference, status_id, "Opening ORD_MST\u2026"))
    assert caught.value.status_code == 429
    assert not caught.value.maybe_delivered
    assert len([r for r in fake_teams_connector.requests if r.method == "PUT"]) == 4


def test_send_after_gateway_error_is_not_repeated(tmp_path: Path, fake_teams_connector: FakeTeamsConnector) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    fake_teams_connector.fail_after_create(502)
    with pytest.raises(TeamsDeliveryError) as caught:
        asyncio.run(poster(tmp_path).post_answer(reference, None, answer_payload()))
    assert caught.value.status_code == 502
    assert caught.value.maybe_delivered
    assert len(fake_teams_connector.created) == 1  # accepted once, never sent again
    assert len(fake_teams_connector.requests) == 1


def test_unknown_activity_and_bad_reference_are_delivery_errors(
    tmp_path: Path, fake_teams_connector: FakeTeamsConnector
) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    teams = poster(tmp_path)
    with pytest.raises(TeamsDeliveryError) as caught:
        asyncio.run(teams.update_status(reference, "act-404", "Searching tables\u2026"))
    assert caught.value.status_code == 404
    assert len(fake_teams_connector.requests) == 1  # a 404 is not retried
    with pytest.raises(TeamsDeliveryError, match="reference"):
        asyncio.run(teams.post_status({"channelId": "msteams"}, "Searching tables\u2026"))


def test_unreachable_connector(tmp_path: Path) -> None:
    with FakeTeamsConnector() as gone:
        reference = stored_reference(tmp_path, gone)
    teams = poster(tmp_path)
    with pytest.raises(TeamsDeliveryError) as caught:
        asyncio.run(teams.post_status(reference, "Searching tables\u2026"))
    assert caught.value.status_code is None
    assert caught.value.maybe_delivered
    with pytest.raises(TeamsDeliveryError, match="could not be reached"):
        asyncio.run(teams.update_status(reference, "act-1", "Searching tables\u2026"))


def test_the_chart_goes_beside_the_card_as_an_inline_image(
    tmp_path: Path, fake_teams_connector: FakeTeamsConnector
) -> None:
    reference = stored_reference(tmp_path, fake_teams_connector)
    png = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")
    image = tmp_path / "turn-9.png"
    image.write_bytes(png)
    chart = Chart(type="line", title="Orders by month", x="month", y=["n"], image=str(image), alt="Line chart")
    answer = answer_payload().model_copy(update={"chart": chart})
    answer_id = asyncio.run(poster(tmp_path).post_answer(reference, None, answer))

    card, picture = fake_teams_connector.messages[answer_id]["attachments"]
    assert card["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert picture["contentType"] == "image/png"
    assert picture["contentUrl"] == "data:image/png;base64," + base64.b64encode(png).decode("ascii")

    gone = answer.model_copy(update={"chart": chart.model_copy(update={"image": str(tmp_path / "gone.png")})})
    again = asyncio.run(poster(tmp_path).post_answer(reference, None, gone))
    assert len(fake_teams_connector.messages[again]["attachments"]) == 1  # no file here: the card alone
