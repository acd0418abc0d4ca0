"""SlackPoster through the real slack_sdk against the fake Slack Web API: status, answer, CSV, retries, errors."""

from __future__ import annotations

import csv
import http.client
import io
import json
import socket
import time
from pathlib import Path

import pytest

from bot.slack.client import SlackDeliveryError
from bot.slack.web import SlackPoster
from core.answer.model import Answer, Chart
from core.errors import ConfigError
from tests.fakes.slack_server import BOT_USER_ID, FakeSlack
from tests.support import isolated_settings

CHANNEL = "C0SALES"


def answer_payload(rows: int = 1, truncated: bool = False) -> Answer:
    return Answer.from_stored(
        {
            "status": "answered",
            "answer": "42 orders shipped to Busan last month.",
            "rounds": 3,
            "tables_used": ["erp.ORD_MST"],
            "sql": [
                {
                    "database": "erp",
                    "sql": "SELECT city, COUNT(*) AS n FROM ORD_MST GROUP BY city",
                    "columns": ["city", "n"],
                    "rows": [[f"city{i}", i] for i in range(rows)],
                    "truncated": truncated,
                    "error": None,
                }
            ],
            "notes_saved": [],
        }
    )


#: A 1x1 PNG: what the poster uploads is the file's bytes, whatever they draw.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
)


@pytest.fixture
def poster(fake_slack: FakeSlack) -> SlackPoster:
    return SlackPoster(fake_slack.token, fake_slack.url)


@pytest.fixture
def question(fake_slack: FakeSlack) -> str:
    return fake_slack.add_message(CHANNEL, "@tablescout how many orders shipped to Busan last month?")


def test_status_is_posted_updated_then_replaced_by_the_answer(
    fake_slack: FakeSlack, poster: SlackPoster, question: str
) -> None:
    status_ts = poster.post_status(CHANNEL, question, "Searching tables…")
    assert [m.block_text for m in fake_slack.thread(CHANNEL, question)] == [
        ":hourglass_flowing_sand: Searching tables…"
    ]
    poster.update_status(CHANNEL, status_ts, "Running SQL on erp…")
    assert fake_slack.message(CHANNEL, status_ts).text == "Running SQL on erp…"

    answer_ts = poster.post_answer(CHANNEL, question, status_ts, answer_payload())

    assert answer_ts == status_ts
    thread = fake_slack.thread(CHANNEL, question)
    assert len(thread) == 1
    answer = thread[0]
    assert answer.user == BOT_USER_ID
    assert answer.edits == 2
    assert answer.text == "42 orders shipped to Busan last month."
    assert "```SELECT city, COUNT(*) AS n FROM ORD_MST GROUP BY city```" in answer.block_text
    assert "Tables used: erp.ORD_MST" in answer.block_text
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
    assert fake_slack.calls_to("files.getUploadURLExternal") == []  # a one-row result needs no CSV


def test_links_never_unfurl(fake_slack: FakeSlack, poster: SlackPoster, question: str) -> None:
    poster.post_status(CHANNEL, question, "Searching tables…")
    poster.post_answer(
        CHANNEL, question, None, answer_payload().model_copy(update={"text": "See https://example.com/report"})
    )
    posts = fake_slack.calls_to("chat.postMessage")
    assert len(posts) == 2
    assert all(c.params["unfurl_links"] is False and c.params["unfurl_media"] is False for c in posts)


def test_answer_without_status_is_posted_in_the_thread_and_a_retry_edits_it(
    fake_slack: FakeSlack, poster: SlackPoster, question: str
) -> None:
    ts = poster.post_answer(CHANNEL, question, None, answer_payload())
    again = poster.post_answer(CHANNEL, question, ts, answer_payload())  # a redelivered job with the stored ts
    assert again == ts
    assert [m.ts for m in fake_slack.thread(CHANNEL, question)] == [ts]
    assert fake_slack.message(CHANNEL, ts).edits == 1


def test_deleted_status_message_gets_a_new_answer(fake_slack: FakeSlack, poster: SlackPoster, question: str) -> None:
    ts = poster.post_answer(CHANNEL, question, "1.000001", answer_payload())
    assert [c.answer["error"] for c in fake_slack.calls_to("chat.update")] == ["message_not_found"]
    assert [m.ts for m in fake_slack.thread(CHANNEL, question)] == [ts]


def test_the_chart_is_uploaded_in_the_thread_beside_the_table(
    fake_slack: FakeSlack, poster: SlackPoster, question: str, tmp_path: Path
) -> None:
    image = tmp_path / "turn-7.png"
    image.write_bytes(PNG)
    chart = Chart(type="bar", title="Orders by city", x="city", y=["n"], image=str(image), alt="Bar chart of orders")
    poster.post_answer(CHANNEL, question, None, answer_payload(rows=3).model_copy(update={"chart": chart}))

    [upload] = fake_slack.completed_files(CHANNEL)
    assert (upload.thread_ts, upload.filename, upload.title) == (question, "chart.png", "Orders by city")
    assert (upload.content, upload.alt_txt) == (PNG, "Bar chart of orders")
    [message] = fake_slack.thread(CHANNEL, question)
    assert "data_table" in [b["type"] for b in message.blocks]  # the image goes beside the table, not instead of it


def test_csv_is_uploaded_in_the_thread_for_a_long_result(
    fake_slack: FakeSlack, poster: SlackPoster, question: str
) -> None:
    status_ts = poster.post_status(CHANNEL, question, "Running SQL on erp…")
    poster.post_answer(CHANNEL, question, status_ts, answer_payload(rows=120))  # more than a Slack table holds

    [upload] = fake_slack.completed_files(CHANNEL)
    assert upload.thread_ts == question
    assert upload.filename == "erp-result-1.csv"
    assert upload.title == "Result of SQL 1 on erp: 120 rows"
    assert upload.content is not None
    rows = list(csv.reader(io.StringIO(upload.content.decode("utf-8-sig"))))
    assert rows == [["city", "n"]] + [[f"city{i}", str(i)] for i in range(120)]
    [message] = fake_slack.thread(CHANNEL, question)
    assert "Showing 100 of 120 rows." in message.block_text
    assert "attached as a CSV file" in message.block_text
    [table] = [b for b in message.blocks if b["type"] == "data_table"]
    assert len(table["rows"]) == 101  # the header row and 100 rows, paged by Slack
    assert table["page_size"] == 10
    assert table["rows"][5] == [{"type": "raw_text", "text": "city4"}, {"type": "raw_number", "value": 4, "text": "4"}]


@pytest.mark.parametrize("with_status", [True, False])
def test_a_workspace_without_the_data_table_block_gets_the_table_block_once(with_status: bool) -> None:
    with FakeSlack(data_table=False) as slack:
        asked = slack.add_message(CHANNEL, "@tablescout orders by city?")
        poster = SlackPoster(slack.token, slack.url)
        status_ts = poster.post_status(CHANNEL, asked, "Running SQL on erp…") if with_status else None
        ts = poster.post_answer(CHANNEL, asked, status_ts, answer_payload(rows=120))
        [message] = slack.thread(CHANNEL, asked)  # one answer: the refused attempt posted nothing
        assert message.ts == ts
        assert [b["type"] for b in message.blocks if "table" in b["type"]] == ["table"]
        assert "Showing 99 of 120 rows." in message.block_text
        refused = [c for c in slack.calls if c.answer.get("error") == "invalid_blocks"]
        assert len(refused) == 1
        [upload] = slack.completed_files(CHANNEL)
        assert upload.filename == "erp-result-1.csv"

        poster.post_answer(CHANNEL, asked, None, answer_payload(rows=3))  # remembered: no second refusal
        assert len([c for c in slack.calls if c.answer.get("error") == "invalid_blocks"]) == 1


def test_csv_is_uploaded_for_a_truncated_result(fake_slack: FakeSlack, poster: SlackPoster, question: str) -> None:
    poster.post_answer(CHANNEL, question, None, answer_payload(rows=3, truncated=True))
    [upload] = fake_slack.completed_files(CHANNEL)
    assert upload.content is not None
    assert upload.content.decode("utf-8-sig").splitlines() == ["city,n", "city0,0", "city1,1", "city2,2"]
    assert "more rows exist" in (upload.title or "")


def test_rate_limited_twice_then_answered_once(fake_slack: FakeSlack, poster: SlackPoster, question: str) -> None:
    fake_slack.rate_limit("chat.postMessage", times=2, retry_after=0)
    ts = poster.post_answer(CHANNEL, question, None, answer_payload())

    posts = fake_slack.calls_to("chat.postMessage")
    assert [c.status for c in posts] == [429, 429, 200]
    assert [m.ts for m in fake_slack.thread(CHANNEL, question)] == [ts]
    assert fake_slack.calls_to("chat.update") == []


def test_rate_limited_update_waits_for_retry_after(fake_slack: FakeSlack, poster: SlackPoster, question: str) -> None:
    status_ts = poster.post_status(CHANNEL, question, "Searching tables…")
    fake_slack.rate_limit("chat.update", times=2, retry_after=1)
    started = time.monotonic()
    poster.post_answer(CHANNEL, question, status_ts, answer_payload())
    assert time.monotonic() - started >= 2.0  # waited Retry-After (1 s) before each of the two retries
    assert [c.status for c in fake_slack.calls_to("chat.update")] == [429, 429, 200]
    assert len(fake_slack.thread(CHANNEL, question)) == 1
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # only the status message


def test_rate_limited_beyond_the_retries_fails_without_posting(
    fake_slack: FakeSlack, poster: SlackPoster, question: str
) -> None:
    fake_slack.rate_limit("chat.postMessage", times=6, retry_after=0)
    with pytest.raises(SlackDeliveryError, match="still rate limited after 5 retries"):
        poster.post_answer(CHANNEL, question, None, answer_payload())
    assert len(fake_slack.calls_to("chat.postMessage")) == 6
    assert fake_slack.thread(CHANNEL, question) == []


def test_failed_upload_reports_the_posted_answer_so_a_retry_does_not_duplicate_it(
    fake_slack: FakeSlack, poster: SlackPoster, question: str
) -> None:
    fake_slack.fail("files.completeUploadExternal", "internal_error")
    with pytest.raises(SlackDeliveryError, match=r"answer was posted but its files \(chart, CSV\) were not") as failure:
        poster.post_answer(CHANNEL, question, None, answer_payload(rows=120))
    first_ts = failure.value.answer_ts
    assert first_ts is not None
    assert failure.value.error == "internal_error"

    assert poster.post_answer(CHANNEL, question, first_ts, answer_payload(rows=120)) == first_ts
    assert [m.ts for m in fake_slack.thread(CHANNEL, question)] == [first_ts]
    assert len(fake_slack.completed_files(CHANNEL)) == 1


def test_invalid_token_is_a_delivery_error_without_the_token(fake_slack: FakeSlack, question: str) -> None:
    token = "xoxb-wrong-secret-123456"
    poster = SlackPoster(token, fake_slack.url)
    with pytest.raises(SlackDeliveryError) as failure:
        poster.post_status(CHANNEL, question, "Searching tables…")
    assert str(failure.value) == "Slack chat.postMessage failed: invalid_auth"
    assert failure.value.error == "invalid_auth"
    assert failure.value.__cause__ is None
    assert failure.value.__context__ is not None
    assert token not in repr(failure.value)
    assert fake_slack.thread(CHANNEL, question) == []


def test_unreachable_slack_is_a_delivery_error_without_the_token() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "xoxb-secret-unreachable"
    poster = SlackPoster(token, f"http://127.0.0.1:{port}/api/", timeout=2)
    with pytest.raises(SlackDeliveryError, match=r"Slack chat\.postMessage failed") as failure:
        poster.post_status(CHANNEL, "1.0", "Searching tables…")
    assert token not in str(failure.value)


def test_poster_from_settings(fake_slack: FakeSlack, tmp_path: Path) -> None:
    settings = isolated_settings(tmp_path, SLACK_BOT_TOKEN=fake_slack.token, slack_api_url=fake_slack.url.rstrip("/"))
    poster = SlackPoster.from_settings(settings)
    assert poster.api_url == fake_slack.url
    poster.post_status(CHANNEL, None, "Searching tables…")
    assert fake_slack.calls_to("chat.postMessage")[-1].headers["authorization"] == f"Bearer {fake_slack.token}"

    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN"):
        SlackPoster.from_settings(isolated_settings(tmp_path))
    assert SlackPoster("xoxb-1").api_url == "https://slack.com/api/"


def test_fake_refuses_blocks_over_slack_limits(fake_slack: FakeSlack) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "x"}}] * 51
    connection = http.client.HTTPConnection("127.0.0.1", fake_slack.port, timeout=5)
    connection.request(
        "POST",
        "/api/chat.postMessage",
        body=json.dumps({"channel": CHANNEL, "blocks": blocks}),
        headers={"Authorization": f"Bearer {fake_slack.token}", "Content-Type": "application/json"},
    )
    answer = json.loads(connection.getresponse().read())
    connection.close()
    assert answer["ok"] is False
    assert answer["error"] == "invalid_blocks"
    assert fake_slack.messages(CHANNEL) == []
