"""`tablescout examples` and `tablescout review` as an admin runs them, on the analysed sample with roles and chat
users; then an approved example retrieved for a similar question, only for users who may see every table it reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from core.access.permissions import Principal, resolve_principal
from core.store.database import Store, open_store
from core.store.embedded import EmbeddedServer
from core.store.models import AnswerFeedback, Conversation, Turn
from core.store.repositories import directory, search_queries
from core.store.repositories import feedback as feedback_repo
from search.encoders import BiEncoderReranker
from search.examples import examples_for
from search.service import Encoders, SearchRequest, search_tables
from tests.cli.conftest import Cli
from tests.conftest import create_scratch_database
from tests.support import SAMPLE_ROLES, default_embedder, isolated_settings
from workers.turns.first_input import database_list, verified_examples

ROLES = SAMPLE_ROLES.replace(
    "groups:\n",
    "  admins:\n    admin: true\n    grants:\n      - database: erp\n"
    "groups:\n  - platform: slack\n    group: S_ADMINS\n    roles: [admins]\n",
)
EXAMPLE_KEYS = {
    "id", "status", "database", "question", "sql", "tables", "proposed_by", "proposed_at", "reviewed_by",
    "reviewed_at", "turn_id",
}  # fmt: skip
ORDERS = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01'"
STAFF = "SELECT COUNT(*) FROM EMP_MST"


@pytest.fixture(scope="module")
def installed(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cli, Store]]:
    url = create_scratch_database(store_server.url, "ts_cli").render_as_string(hide_password=False)
    cli = Cli(tmp_path_factory.mktemp("home"), {"TABLESCOUT_DATABASE_URL": url})
    assert cli("init").returncode == 0
    assert cli("sample", "build", "--register").returncode == 0
    analysed = cli("analyze", "--all")
    assert analysed.returncode == 0, analysed.stderr
    config = cli.home / "tablescout.yaml"
    text = config.read_text()
    config.write_text(text.replace("roles: {}\ngroups: []\n", ROLES))
    store = open_store(isolated_settings(cli.home, database_url=url))
    now = datetime.now(UTC)
    with store.transaction() as session:
        sales = directory.upsert_user(session, platform="slack", user_id="U_SALES", synced_at=now)
        admin = directory.upsert_user(session, platform="slack", user_id="U_ADMIN", synced_at=now)
        directory.upsert_user(session, platform="slack", user_id="U_GUEST", synced_at=now)
        sales_group = directory.upsert_group(session, platform="slack", group_id="S_SALES", synced_at=now)
        admin_group = directory.upsert_group(session, platform="slack", group_id="S_ADMINS", synced_at=now)
        directory.replace_members(session, sales_group, [sales])
        directory.replace_members(session, admin_group, [admin])
        for question, sql, table in (
            ("How many orders were placed in 2024?", ORDERS, "ORD_MST"),
            ("How many employees do we have?", STAFF, "EMP_MST"),
            ("Which customers are in Busan?", "SELECT * FROM CUST_MST", "CUST_MST"),
            ("What is the revenue?", "SELECT 1", "ORD_MST"),
        ):
            feedback_repo.add_example(
                session, turn_id=None, question=question, database="erp", sql=sql, tables=[table],
                platform="slack", user_id="U_SALES",
            )  # fmt: skip
    try:
        yield cli, store
    finally:
        store.close()


def listed(cli: Cli, *args: str) -> list[dict[str, Any]]:
    result = cli("examples", "list", *args, "--json")
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def test_an_admin_approves_edits_rejects_and_deletes_examples_and_others_may_not(installed: tuple[Cli, Store]) -> None:
    cli, _ = installed
    rows = listed(cli)
    assert [r["status"] for r in rows] == ["proposed"] * 4
    assert set(rows[0]) == EXAMPLE_KEYS
    assert rows[0]["proposed_by"] == "slack:U_SALES"
    first, staff, customers, revenue = (r["id"] for r in rows)

    refused = cli("examples", "approve", str(first), "--user", "slack:U_SALES")
    assert refused.returncode == 1
    assert "has no admin role" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert listed(cli, "--status", "approved") == []

    edited = "How many orders did we get in 2024?"
    done = cli("examples", "approve", str(first), "--question", edited, "--user", "slack:U_ADMIN")
    assert done.returncode == 0, done.stderr
    assert cli("examples", "approve", str(staff)).returncode == 0  # the operator is an admin
    assert cli("examples", "reject", str(revenue), "--user", "slack:U_ADMIN").returncode == 0
    assert cli("examples", "delete", str(customers)).returncode == 0
    approved = listed(cli, "--status", "approved")
    assert [(r["id"], r["question"], r["reviewed_by"]) for r in approved[:1]] == [(first, edited, "slack:U_ADMIN")]
    assert [r["id"] for r in approved] == [first, staff]
    assert [r["id"] for r in listed(cli, "--status", "rejected")] == [revenue]
    assert customers not in [r["id"] for r in listed(cli)]
    missing = cli("examples", "approve", "99999")
    assert missing.returncode == 1
    assert "no example #99999" in missing.stderr
    assert cli("examples", "list", "--status", "maybe").returncode == 1


def test_an_approved_example_is_retrieved_for_a_similar_question_only_for_users_who_may_see_its_tables(
    installed: tuple[Cli, Store],
) -> None:
    cli, store = installed
    for row in listed(cli, "--status", "proposed"):
        assert cli("examples", "approve", str(row["id"])).returncode == 0
    config = isolated_settings(cli.home)
    embedder = default_embedder()

    def found(principal: Principal, question: str) -> list[str]:
        vector = embedder.embed([question])[0].tolist()
        with store.transaction() as session:
            return [hit.sql for hit in examples_for(session, principal, vector, ["erp", "billing"])]

    with store.transaction() as session:
        sales = resolve_principal(session, config.file, "slack", "U_SALES")  # erp without EMP_*
        guest = resolve_principal(session, config.file, "slack", "U_GUEST")  # erp ORD_*, CUST_*, CODE_* only
    operator = Principal.for_operator()
    assert found(sales, "how many orders were placed in 2024") == [ORDERS]
    assert found(guest, "how many orders were placed in 2024") == [ORDERS]
    assert found(operator, "how many employees are there") == [STAFF]
    assert found(sales, "how many employees are there") == []  # it reads EMP_MST, which sales may not see
    assert found(guest, "how many employees are there") == []
    assert found(sales, "what colour is the office carpet") == []  # nothing similar enough

    encoders = Encoders(embedder, BiEncoderReranker(embedder))
    with store.transaction() as session:
        listing = database_list(search_queries.sources(session), sales, "how many orders in 2024")
        text = verified_examples(session, sales, embedder, "how many orders were placed in 2024", listing)
        assert ORDERS in text
        assert "never instructions" in text
        assert STAFF not in text
        result = search_tables(session, sales, SearchRequest("number of orders in 2024"), encoders, None)
        by_table = {c.table: c for c in result.candidates}
        assert "example" in by_table["ORD_MST"].matched_by
        staff_search = search_tables(session, operator, SearchRequest("how many employees are there"), encoders, None)
        assert "example" in {c.table: c for c in staff_search.candidates}["EMP_MST"].matched_by


def test_review_lists_thumbs_down_answers_with_their_reason_and_channel_notes(installed: tuple[Cli, Store]) -> None:
    cli, store = installed
    with store.transaction() as session:
        conversation = Conversation(platform="slack", channel_id="C_GENERAL", thread_id="1.0")
        session.add(conversation)
        session.flush()
        turn = Turn(
            conversation_id=conversation.id, user_platform="slack", user_id="U_SALES",
            question="How many returns?", answer="12 returns.", status="answered",
        )  # fmt: skip
        session.add(turn)
        session.flush()
        session.add(AnswerFeedback(turn_id=turn.id, user_platform="slack", user_id="U_GUEST", rating="bad"))
        session.add(AnswerFeedback(turn_id=turn.id, user_platform="slack", user_id="U_SALES", rating="good"))
        session.flush()
        feedback_repo.set_reason(session, turn.id, "slack", "U_GUEST", "Returns are in RET_DTL")
        turn_id = turn.id
    added = cli("note", "add", "erp", "ORD_MST_BAK", "a copy nobody maintains", "--json")
    assert added.returncode == 0, added.stderr
    note_id = json.loads(added.stdout)["id"]
    private = cli("note", "add", "erp", "ORD_MST", "my own scratch note", "--private", "--json")
    assert private.returncode == 0, private.stderr

    refused = cli("review", "list", "--user", "slack:U_GUEST")
    assert refused.returncode == 1
    assert "has no admin role" in refused.stderr
    result = cli("review", "list", "--json", "--user", "slack:U_ADMIN")
    assert result.returncode == 0, result.stderr
    queue = json.loads(result.stdout)
    assert [(b["turn_id"], b["user"], b["reason"]) for b in queue["bad_answers"]] == [
        (turn_id, "slack:U_GUEST", "Returns are in RET_DTL")
    ]
    assert queue["bad_answers"][0]["question"] == "How many returns?"
    assert [n["id"] for n in queue["channel_notes"]] == [note_id]  # the private note is not in the queue
    plain = cli("review", "list")
    assert plain.returncode == 0
    assert "Returns are in RET_DTL" in plain.stdout
