"""Column masks and row filters reach everything besides the SQL (issue 20 item 4): cards, search candidates and
the value index behind them, join hints and `tablescout card --user` never show a masked column's values (a hidden
column not at all), and a row-filtered table's card counts the rows the user's own SQL reads instead of the
table's total. Turns with a scripted model run the real tools."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select

from core.access.mask_key import mask_key
from core.access.permissions import Principal, resolve_principal
from core.access.users import UserRef
from core.store.models import ExecutedSql, Note
from search.notes import list_notes, save_note
from tests.fakes.model_server import Call, FakeModelServer, Say
from tests.support import run_cli
from tests.workers.turns.mask_world import (
    EMAILS,
    GRADES,
    PHONES,
    SEOUL_AMOUNT,
    MaskWorld,
    canaries,
    mask_world,
)
from workers.turns.state import TurnEnvironment

__all__ = ["mask_world"]  # the fixture, used by the tests below


def _leaks(text: str) -> list[str]:
    return [canary for canary in canaries() if canary in text]


def _tools(
    world: MaskWorld, server: FakeModelServer, user: str, calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[str]:
    """Run one turn whose model makes `calls` in order; the tool results it read, in order."""
    server.script([*(Call(tool, args) for tool, args in calls), Say("done")])
    first = len(server.requests)
    env: TurnEnvironment = world.world.environment(server)
    turn_id = world.world.submit("Which customers called and what did Busan order?", user=user)
    world.world.run(env, turn_id)
    return [server.requests[first + i].exchange.tool_results[tool] for i, (tool, _) in enumerate(calls, start=1)]


def _cli(world: MaskWorld, *args: str) -> Any:
    settings = world.world.settings
    assert settings.database_url is not None
    return run_cli(settings.home, *args, env={"TABLESCOUT_DATABASE_URL": settings.database_url.get_secret_value()})


def test_a_card_lists_masked_columns_without_values_and_leaves_hidden_ones_out(
    mask_world: MaskWorld, fake_anthropic: FakeModelServer
) -> None:
    db = mask_world.database
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_table_card", {"database": db, "table": "CUST_MST"}),
        ("open_table_card", {"database": db, "table": "CUST_MST", "columns": ["TEL_NO", "EMAIL", "GRADE_CD"]}),
    ]
    full, detail = _tools(mask_world, fake_anthropic, "U_ALL", calls)
    assert PHONES[0] in full, "a user without masks reads the phone numbers in the card"
    assert EMAILS[0] in full
    assert "VIP" in detail
    card, asked = _tools(mask_world, fake_anthropic, "U_BUSAN", calls)
    for text in (card, asked):
        assert _leaks(text) == [], text
        assert "TEL_NO" not in text
        assert not any(grade in text for grade in GRADES), text
    assert "EMAIL" in card
    assert "masked for you (redact)" in card
    assert "masked for you (null)" in asked
    assert "No such column: tel_no" in asked, "a hidden column reads like one that does not exist"


def test_a_row_filtered_card_counts_the_users_rows_instead_of_the_total(
    mask_world: MaskWorld, fake_anthropic: FakeModelServer
) -> None:
    db = mask_world.database
    calls: list[tuple[str, dict[str, Any]]] = [("open_table_card", {"database": db, "table": "ORD_MST"})]
    [full] = _tools(mask_world, fake_anthropic, "U_ALL", calls)
    assert "40 rows" in full
    assert f"{SEOUL_AMOUNT}" in full, "the amounts' range shows the canary to a user without a filter"
    assert "distinct 40" in full
    [card] = _tools(mask_world, fake_anthropic, "U_BUSAN", calls)
    assert "20 rows you may read (filtered for you)" in card, "the rows the user's own SQL reads"
    assert "40 rows" not in card
    assert "distinct 40" not in card, "nor a distinct count that gives the total away"
    assert _leaks(card) == [], card
    assert "SHIP_CITY" in card


def test_join_hints_through_a_hidden_column_do_not_exist(
    mask_world: MaskWorld, fake_anthropic: FakeModelServer
) -> None:
    db = mask_world.database
    calls: list[tuple[str, dict[str, Any]]] = [
        ("find_join_path", {"database": db, "tables": ["CALL_LOG", "CUST_MST"]}),
        ("open_table_card", {"database": db, "table": "CALL_LOG"}),
    ]
    joins, card = _tools(mask_world, fake_anthropic, "U_ALL", calls)
    assert "CUST_MST(TEL_NO)" in joins, joins
    assert "CUST_MST(TEL_NO)" in card, card
    joins, card = _tools(mask_world, fake_anthropic, "U_BUSAN", calls)
    assert "CUST_MST(TEL_NO)" not in joins
    assert "CUST_MST(TEL_NO)" not in card


def test_search_never_matches_or_shows_a_masked_value(mask_world: MaskWorld, fake_anthropic: FakeModelServer) -> None:
    db = mask_world.database
    question = "canary example kr"  # words of the e-mail addresses, indexed as CUST_MST.EMAIL's frequent values
    everyone = _cli(mask_world, "search", question, "--db", db, "--user", "slack:U_ALL", "--json")
    assert everyone.returncode == 0, everyone.stderr
    matched = {c["table"]: c["matched_by"] for c in json.loads(everyone.stdout)["candidates"]}
    assert "keyword" in matched["CUST_MST"], matched
    masked = _cli(mask_world, "search", question, "--db", db, "--user", "slack:U_BUSAN", "--json")
    assert masked.returncode == 0, masked.stderr
    matched = {c["table"]: c["matched_by"] for c in json.loads(masked.stdout)["candidates"]}
    assert "keyword" not in matched.get("CUST_MST", []), matched
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_tables", {"question": "customer phone number e-mail and grade", "databases": [db]}),
    ]
    [everyone_text] = _tools(mask_world, fake_anthropic, "U_ALL", calls)
    assert "VIP" in everyone_text or EMAILS[0] in everyone_text or PHONES[0] in everyone_text
    [text] = _tools(mask_world, fake_anthropic, "U_BUSAN", calls)
    assert _leaks(text) == [], text
    assert not any(grade in text for grade in GRADES), text
    assert "CUST_MST(TEL_NO)" not in text


def test_the_card_command_shows_the_card_as_the_user_sees_it(mask_world: MaskWorld) -> None:
    db = mask_world.database
    operator = _cli(mask_world, "card", db, "CUST_MST", "--json")
    assert operator.returncode == 0, operator.stderr
    assert PHONES[0] in operator.stdout
    shown = _cli(mask_world, "card", db, "CUST_MST", "--user", "slack:U_BUSAN", "--json")
    assert shown.returncode == 0, shown.stderr
    assert _leaks(shown.stdout) == []
    card = json.loads(shown.stdout)
    columns = {c["name"]: c for c in card["columns"]}
    assert "TEL_NO" not in columns
    assert columns["EMAIL"]["masked"] == "redact"
    assert not {"stats", "frequent", "codes"} & set(columns["EMAIL"])
    assert columns["GRADE_CD"]["masked"] == "null"
    assert "masked" not in columns["CUST_NM"]
    orders = _cli(mask_world, "card", db, "ORD_MST", "--user", "slack:U_BUSAN")
    assert orders.returncode == 0, orders.stderr
    assert "20 rows you may read (filtered for you)" in orders.stdout
    assert _leaks(orders.stdout) == []
    as_json = _cli(mask_world, "card", db, "ORD_MST", "--user", "slack:U_BUSAN", "--json")
    body = json.loads(as_json.stdout)
    assert (body["row_count"], body["rows_filtered"], body["sample"]) == (20, True, None)
    assert _leaks(as_json.stdout) == []


NOTES_ON_CUSTOMERS = {
    "quotes a masked value": f"Customers graded {GRADES[0]} get free shipping on every order.",
    "names a hidden column": "TEL_NO holds the number from sign-up and is not kept up to date.",
    "harmless": "CUST_MST is the customer master; one row per customer.",
}


def test_a_note_naming_or_quoting_a_masked_column_is_not_shown_to_whom_it_is_masked(
    mask_world: MaskWorld, fake_anthropic: FakeModelServer
) -> None:
    store = mask_world.world.installation.store
    with store.transaction() as session:
        before = session.scalar(select(func.max(Note.id))) or 0
        for text in NOTES_ON_CUSTOMERS.values():
            save_note(
                session,
                Principal.for_operator(),
                mask_world.world.encoders.embedder,
                database=mask_world.database,
                tables=["CUST_MST"],
                text=text,
                author=UserRef("slack", "U_ALL"),
                private=False,
            )
    try:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("open_table_card", {"database": mask_world.database, "table": "CUST_MST"})
        ]
        [full] = _tools(mask_world, fake_anthropic, "U_ALL", calls)
        assert all(text in full for text in NOTES_ON_CUSTOMERS.values()), full
        [masked] = _tools(mask_world, fake_anthropic, "U_BUSAN", calls)
        assert NOTES_ON_CUSTOMERS["harmless"] in masked
        assert NOTES_ON_CUSTOMERS["quotes a masked value"] not in masked
        assert NOTES_ON_CUSTOMERS["names a hidden column"] not in masked
        with store.transaction() as session:
            principal = resolve_principal(session, mask_world.world.settings.file, "slack", "U_BUSAN")
            listed = [n.text for n in list_notes(session, principal, UserRef("slack", "U_BUSAN"), database="masked")]
        assert listed == [NOTES_ON_CUSTOMERS["harmless"]]
    finally:
        with store.transaction() as session:
            session.execute(delete(Note).where(Note.id > before))


def test_an_answer_another_user_got_is_withheld_from_a_follow_up_under_a_row_filter(
    mask_world: MaskWorld, fake_anthropic: FakeModelServer
) -> None:
    world = mask_world.world
    everything = f"The largest order is {SEOUL_AMOUNT:,} (ORD_MST)."
    fake_anthropic.script(
        [Call("run_sql", {"database": mask_world.database, "sql": "SELECT MAX(ORD_AMT) FROM ORD_MST"}), Say(everything)]
    )
    thread = "T_MASKED_HISTORY"
    first = world.submit("What is the largest order?", user="U_ALL", thread=thread)
    world.run(world.environment(fake_anthropic), first)
    assert world.turn(first)["tables_used"] == [f"{mask_world.database}.ORD_MST"]
    fake_anthropic.script([Say("ok")])
    for user, shown in (("U_ALL", True), ("U_BUSAN", False)):
        follow_up = world.submit("And the smallest?", user=user, thread=thread)
        world.run(world.environment(fake_anthropic), follow_up)
        texts = " ".join(str(m["content"]) for m in fake_anthropic.requests[-1].raw["messages"])
        assert (everything in texts) is shown, texts
        fake_anthropic.script([Say("ok")])


def test_a_hash_masked_column_reaches_the_model_as_a_keyed_hash_and_never_the_key(
    mask_world: MaskWorld, fake_anthropic: FakeModelServer
) -> None:
    """Issue 30 item 4: what the model and the stored turn read are HMAC-SHA-256 hashes under the installation's
    key, which no MD5 or SHA-256 of a guess matches, and no piece of the key is anywhere in them."""
    world = mask_world.world
    sql = "SELECT CUST_NO, CUST_NM, EMAIL FROM CUST_MST ORDER BY CUST_NO"
    fake_anthropic.script([Call("run_sql", {"database": mask_world.database, "sql": sql}), Say("done")])
    first = len(fake_anthropic.requests)
    turn_id = world.submit("List the customers", user="U_HASH", thread="T_HASHED")
    world.run(world.environment(fake_anthropic), turn_id)
    result = fake_anthropic.requests[first + 1].exchange.tool_results["run_sql"]
    stored = json.dumps(world.turn(turn_id)["result"])
    key = mask_key(world.settings)
    names = [f"Customer {i}" for i in range(12)]
    for text in (result, stored):
        assert [name for name in names if key.digest(name.encode()) not in text] == []
        assert key.digest(EMAILS[0].encode()) in text
        assert not [name for name in names if name in text]
        guesses = [*names, *EMAILS]
        assert not [g for g in guesses if hashlib.md5(g.encode(), usedforsecurity=False).hexdigest() in text]
        assert not [g for g in guesses if hashlib.sha256(g.encode()).hexdigest() in text]
        forms = [form.lower() for form in key.secret_texts()]
        assert not [f[i : i + 8] for f in forms for i in range(len(f) - 7) if f[i : i + 8] in text.lower()]
    with world.installation.store.transaction() as session:
        audit = session.scalars(select(ExecutedSql).where(ExecutedSql.turn_id == turn_id)).one()
        assert audit.sql == sql
        assert audit.policies == "CUST_MST.CUST_NM hashed; CUST_MST.EMAIL hashed"
