"""The HTTP API on the bot server (issue 36 item 2): a token acts as its directory user through search, cards,
notes and turns; errors are JSON and name nothing the caller may not see; the OpenAPI document validates."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from openapi_spec_validator import validate

from api.http import PREFIX, ROUTES
from api.openapi import openapi_document
from core.store.models.base import utcnow
from core.store.repositories import api_tokens
from tests.api.world import EMAILS, HIDDEN_DATABASE, HIDDEN_TABLE, ApiServer, canaries
from tests.fakes.model_server import Call, Say, Slow


def leaks(text: str) -> list[str]:
    return [canary for canary in canaries() if canary in text]


def test_the_openapi_document_validates_and_is_served_without_a_token(api_server: ApiServer) -> None:
    document = openapi_document()
    validate(document)  # raises on anything that breaks the OpenAPI 3.1 specification
    served = api_server.call("GET", "/api/v1/openapi.json")
    assert served.status == 200
    assert served.json() == json.loads(json.dumps(document))
    documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert documented == {(method, PREFIX + path) for method, path, _ in ROUTES}, "every route, and only those"
    assert "Answer" in document["components"]["schemas"]


def test_missing_malformed_and_unknown_requests_get_json_4xx(api_server: ApiServer) -> None:
    token = api_server.world.token("U_CLERK")
    cases: list[tuple[int, str, Any]] = [
        (401, "unauthorized", api_server.call("GET", "/api/v1/databases")),
        (401, "unauthorized", api_server.call("GET", "/api/v1/databases", token="tsk_" + "x" * 43)),
        (401, "unauthorized", api_server.call("GET", "/api/v1/databases", token="not-a-token")),
        (404, "not_found", api_server.call("GET", "/api/v1/nothing-here", token=token)),
        (405, "method_not_allowed", api_server.call("DELETE", "/api/v1/ask", token=token)),
        (400, "bad_request", api_server.call("POST", "/api/v1/ask", token=token, raw=b"{not json")),
        (400, "bad_request", api_server.call("POST", "/api/v1/ask", token=token, body={"question": ""})),
        (400, "bad_request", api_server.call("POST", "/api/v1/ask", token=token, body={"question": "x", "extra": 1})),
        (400, "bad_request", api_server.call("POST", "/api/v1/ask?wait=soon", token=token, body={"question": "x"})),
        (400, "bad_request", api_server.call("GET", "/api/v1/turns/abc", token=token)),
        (404, "not_found", api_server.call("GET", "/api/v1/turns/999999999", token=token)),
        (400, "bad_request", api_server.call("GET", "/api/v1/search", token=token)),
        (400, "bad_request", api_server.call("GET", "/api/v1/search?question=orders&k=0", token=token)),
    ]
    for status, code, reply in cases:
        assert (reply.status, reply.json()["code"]) == (status, code), reply.text
        assert reply.headers["Content-Type"].startswith("application/json")
        assert reply.json()["error"]


def test_a_clerk_token_sees_masked_columns_filtered_counts_and_no_hidden_names(api_server: ApiServer) -> None:
    clerk = api_server.world.token("U_CLERK")
    listed = api_server.call("GET", "/api/v1/databases", token=clerk).json()
    assert [d["name"] for d in listed] == ["shop"]
    assert HIDDEN_TABLE not in json.dumps(listed)

    card = api_server.call("GET", "/api/v1/tables/shop/CUST_MST", token=clerk)
    assert card.status == 200
    assert leaks(card.text) == []
    columns = [c["name"] for c in card.json()["card"]["columns"]]
    assert "TEL_NO" not in columns, "a hidden column is left out"
    assert "EMAIL" in columns
    assert "masked for you (redact)" in card.json()["text"]

    boss = api_server.world.token("U_BOSS")
    full = api_server.call("GET", "/api/v1/tables/shop/CUST_MST", token=boss)
    assert EMAILS[0] in full.text, "the manager's card shows the values (so the clerk's check can fail)"

    # What the clerk may not see reads like what does not exist, and no suggestion names it.
    for path in (
        "/api/v1/tables/shop/PAY_ROL",
        f"/api/v1/tables/{HIDDEN_DATABASE}/STAFF",
        "/api/v1/search?question=pay&database=hr",
    ):
        reply = api_server.call("GET", path, token=clerk)
        assert reply.status == 404, reply.text
        assert HIDDEN_TABLE not in reply.text
        assert "STAFF" not in reply.text or path.endswith("STAFF")
    hidden_db = api_server.call("GET", f"/api/v1/tables/{HIDDEN_DATABASE}/STAFF", token=clerk).json()["error"]
    assert "databases you may ask about: shop" in hidden_db

    found = api_server.call("GET", "/api/v1/search?question=customer%20phone%20and%20email", token=clerk)
    assert found.status == 200
    body = found.json()
    assert set(body) == {"searched", "candidates", "denied_tables", "parts"}
    assert body["searched"]["databases"] == ["shop"]
    assert any(c["table"] == "CUST_MST" for c in body["candidates"])
    assert [c for c in leaks(json.dumps(body["candidates"])) if c != HIDDEN_TABLE] == []


def test_ask_waits_for_the_answer_and_the_clerk_reads_only_busan_orders(api_server: ApiServer) -> None:
    clerk = api_server.world.token("U_CLERK")
    api_server.model.script([Call("run_sql", {"database": "shop", "sql": "SELECT COUNT(*) FROM ORD_MST"}), Say("done")])
    reply = api_server.call(
        "POST", "/api/v1/ask?wait=30", token=clerk, body={"question": "How many orders do we have?"}
    )
    assert reply.status == 200, reply.text
    turn = reply.json()
    assert turn["status"] == "answered"
    busan = api_server.world.shop_scalar("SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan'")
    assert turn["answer"]["sql"][0]["rows"] == [[busan]]
    assert busan < api_server.world.shop_scalar("SELECT COUNT(*) FROM ORD_MST")
    assert "guided" not in turn["answer"]
    again = api_server.call("GET", f"/api/v1/turns/{turn['turn_id']}", token=clerk).json()
    assert again == turn
    # A turn is its asker's: another token reads it as missing.
    boss = api_server.world.token("U_BOSS")
    assert api_server.call("GET", f"/api/v1/turns/{turn['turn_id']}", token=boss).status == 404

    api_server.model.script([Say("It is the same conversation.")])
    follow = {"question": "And last month?", "thread_id": turn["thread_id"]}
    second = api_server.call("POST", "/api/v1/ask?wait=60", token=clerk, body=follow).json()
    assert second["thread_id"] == turn["thread_id"]
    assert "How many orders do we have?" in json.dumps(api_server.model.requests[-1].raw)
    unknown = api_server.call("POST", "/api/v1/ask", token=clerk, body={"question": "x", "thread_id": "nope"})
    assert unknown.status == 404


def read_events(url: str, token: str) -> list[tuple[str, dict[str, Any]]]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the local test server
        assert response.headers["Content-Type"].startswith("text/event-stream")
        text = response.read().decode()
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_the_event_stream_sends_status_then_the_answer(api_server: ApiServer) -> None:
    clerk = api_server.world.token("U_CLERK")
    sql = {"database": "shop", "sql": "SELECT SUM(ORD_AMT) FROM ORD_MST"}
    api_server.model.script([Call("run_sql", sql), Slow(2.0, Say("done"))])  # "Running SQL" shows meanwhile
    queued = api_server.call("POST", "/api/v1/ask", token=clerk, body={"question": "What is the order total?"})
    assert queued.status == 202
    turn_id = queued.json()["turn_id"]
    events = read_events(f"{api_server.url}/api/v1/turns/{turn_id}/events", clerk)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "status"
    assert kinds[-1] == "answer"
    assert set(kinds[:-1]) == {"status"}
    assert events[-1][1]["status"] == "answered"
    assert any(data.get("line") == "Running SQL on shop…" for kind, data in events if kind == "status")


def test_notes_are_added_as_the_token_user_and_shown_on_the_card(api_server: ApiServer) -> None:
    clerk = api_server.world.token("U_CLERK")
    note = {"database": "shop", "tables": ["ORD_MST"], "text": "ORD_AMT is in won, VAT included", "private": True}
    saved = api_server.call("POST", "/api/v1/notes", token=clerk, body=note)
    assert saved.status == 201, saved.text
    assert saved.json() | {"id": 0} == {"id": 0, "database": "shop", "tables": ["ORD_MST"], "private": True}
    card = api_server.call("GET", "/api/v1/tables/shop/ORD_MST", token=clerk).json()
    assert [(n["text"], n["author"]) for n in card["notes"]] == [(note["text"], "slack:U_CLERK")]
    boss = api_server.world.token("U_BOSS")
    assert api_server.call("GET", "/api/v1/tables/shop/ORD_MST", token=boss).json()["notes"] == [], "private"
    hidden = api_server.call("POST", "/api/v1/notes", token=clerk, body=note | {"tables": [HIDDEN_TABLE]})
    assert hidden.status == 404


def test_a_revoked_or_expired_token_is_refused_on_its_next_request(api_server: ApiServer) -> None:
    world = api_server.world
    token = world.token("U_CLERK")
    assert api_server.call("GET", "/api/v1/databases", token=token).status == 200
    with world.installation.store.transaction() as session:
        row = api_tokens.all_tokens(session)[-1]
        assert row.last_used_at is not None
        api_tokens.revoke(session, row.id, utcnow())
    refused = api_server.call("GET", "/api/v1/databases", token=token)
    assert (refused.status, refused.json()["error"]) == (401, "this API token was revoked")

    expiring = world.token("U_CLERK")
    with world.installation.store.transaction() as session:
        api_tokens.all_tokens(session)[-1].expires_at = utcnow()
    assert api_server.call("GET", "/api/v1/databases", token=expiring).status == 401


def test_a_token_over_its_rate_gets_429_with_retry_after(api_server: ApiServer) -> None:
    token = api_server.world.token("U_CLERK", rate=2)
    statuses = [api_server.call("GET", "/api/v1/databases", token=token) for _ in range(3)]
    assert [r.status for r in statuses] == [200, 200, 429]
    assert statuses[-1].json()["code"] == "rate_limited"
    assert int(statuses[-1].headers["Retry-After"]) >= 1
