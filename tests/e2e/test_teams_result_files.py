"""A Teams answer too large for its card links to the whole result, served as CSV by the bot server."""

from __future__ import annotations

import csv
import io
import sqlite3
import urllib.error
import urllib.request

import pytest

from bot.result_files import GONE
from tests.e2e.conftest import TeamsStack
from tests.e2e.test_teams_chat import activity, cards
from tests.workers.turns.scripts import search_then_query
from tests.workers.turns.worker_support import wait_until

pytestmark = pytest.mark.timeout(300)

QUESTION = "List the first 150 orders with their ship-to city"
SQL = "SELECT ORD_NO, SHIP_CITY FROM ORD_MST ORDER BY ORD_NO LIMIT 150"


def fetch(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - the local bot server
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read()


def test_a_large_result_is_shown_in_part_and_downloaded_whole(teams_stack: TeamsStack) -> None:
    stack = teams_stack
    stack.model.script(search_then_query(QUESTION, "erp", "ORD_MST", SQL, "Here are the first 150 orders."))
    assert stack.post_activity(activity(stack.connector.url, QUESTION, activity_id="1700000000919")).status_code == 200
    wait_until(lambda: bool(cards(stack.connector)), 90, "the Adaptive Card answer")
    [card] = cards(stack.connector)
    [table] = [e for e in card["body"] if e.get("type") == "Table"]
    assert 10 < len(table["rows"]) - 1 < 150  # the first rows, as many as the card holds
    [action] = card["actions"]
    assert action["title"] == "Download all 150 rows (CSV)"
    assert action["url"].startswith(stack.server.url + "/files/")  # the address Teams reached the server by

    status, kind, body = fetch(action["url"])
    assert status == 200
    assert kind.startswith("text/csv")
    rows = list(csv.reader(io.StringIO(body.decode("utf-8-sig"))))
    assert rows[0] == ["ORD_NO", "SHIP_CITY"]
    assert len(rows) == 151
    with sqlite3.connect(stack.world.erp_path) as conn:
        expected = conn.execute(SQL).fetchall()
    assert rows[1:] == [[str(v) for v in row] for row in expected]

    forged = action["url"].replace("/result-1.csv", "/result-2.csv")
    wrong_key = action["url"][:-20] + "x" * 4 + action["url"][-16:]
    for url in (forged, wrong_key, stack.server.url + "/files/1-" + "a" * 24 + "/result-1.csv"):
        status, _, body = fetch(url)
        assert status == 404
        assert body.decode() == GONE  # the same sentence whatever was wrong; no table, no host
