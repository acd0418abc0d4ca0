"""The rules a turn enforces whatever the model does: live tables over copies, permissions on every table the
SQL reads, and security context from the turn only."""

from __future__ import annotations

from sqlalchemy import select

from core.store.models import ExecutedSql
from tests.fakes.model_server import Call, Calls, FakeModelServer, Say
from tests.turn_world import TurnWorld

COPY_SQL = "SELECT COUNT(*) FROM ORD_MST_BAK"
LIVE_SQL = "SELECT COUNT(*) FROM ORD_MST"


def test_sql_on_a_copy_is_refused_unless_the_question_asks_about_it(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    fake_anthropic.script(
        [
            Call("run_sql", {"database": "erp", "sql": COPY_SQL}),
            Call("run_sql", {"database": "erp", "sql": LIVE_SQL}),
            Say("done"),
        ]
    )
    turn_id = turn_world.submit("How many orders do we have?")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    refused = fake_anthropic.requests[1].exchange
    assert "run_sql" in refused.tool_errors
    assert "ORD_MST_BAK is a backup copy of ORD_MST" in refused.tool_results["run_sql"]
    stored = turn_world.turn(turn_id)
    copy_run, live_run = stored["result"]["sql"]
    assert copy_run["error"] is not None
    assert live_run["rows"] == [[turn_world.erp_scalar(LIVE_SQL)]]
    assert stored["tables_used"] == ["erp.ORD_MST"]
    assert stored["result"]["copies_used"] == []

    fake_anthropic.script([Call("run_sql", {"database": "erp", "sql": COPY_SQL}), Say("done")])
    asked = turn_world.submit("How many orders are in the backup table ORD_MST_BAK?")
    turn_world.run(turn_world.environment(fake_anthropic), asked)
    [run] = turn_world.turn(asked)["result"]["sql"]
    assert run["error"] is None
    assert run["rows"] == [[turn_world.erp_scalar(COPY_SQL)]]
    assert turn_world.turn(asked)["tables_used"] == ["erp.ORD_MST_BAK"]
    assert turn_world.turn(asked)["result"]["copies_used"] == ["erp.ORD_MST_BAK"]  # the answer says it is a copy


DENIED_SQL = [
    "SELECT SUM(SAL_AMT) FROM EMP_MST",
    "SELECT COUNT(*) FROM (SELECT * FROM EMP_MST) AS e",
    "WITH staff AS (SELECT * FROM EMP_MST) SELECT COUNT(*) FROM staff",
    'SELECT COUNT(*) FROM "EMP_MST"',
    "SELECT COUNT(*) FROM main.EMP_MST",
    "SELECT COUNT(*) FROM emp_mst",
    "SELECT ORD_NO FROM ORD_MST WHERE EMP_NO IN (SELECT EMP_NO FROM EMP_MST WHERE SAL_AMT > 5000000)",
]


def test_a_denied_table_is_no_permission_everywhere(turn_world: TurnWorld, fake_anthropic: FakeModelServer) -> None:
    fake_anthropic.script(
        [
            Call("search_tables", {"question": "monthly salary of employees"}),
            Call("open_table_card", {"database": "erp", "table": "EMP_MST"}),
            Calls([("run_sql", {"database": "erp", "sql": sql}) for sql in DENIED_SQL]),
            Say("The salary data exists, but you have no permission to see it."),
        ]
    )
    turn_id = turn_world.submit("What is the total monthly salary of our employees?", user="U_GUEST")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    search_text = fake_anthropic.requests[1].exchange.tool_results["search_tables"]
    assert "denied_tables (exist, but this user has no permission): erp.EMP_MST" in search_text
    assert "SAL_AMT" not in search_text
    card_text = fake_anthropic.requests[2].exchange.tool_results["open_table_card"]
    assert card_text.startswith("error: no permission")
    assert "SAL_AMT" not in card_text
    stored = turn_world.turn(turn_id)
    runs = stored["result"]["sql"]
    assert len(runs) == len(DENIED_SQL)
    for run in runs:
        assert run["rows"] == []
        assert "no permission" in run["error"], run
    assert stored["tables_used"] == []
    with turn_world.installation.store.transaction() as session:
        statuses = session.scalars(select(ExecutedSql.status).where(ExecutedSql.turn_id == turn_id)).all()
    assert len(statuses) == len(DENIED_SQL)
    assert set(statuses) == {"denied"}


def test_model_arguments_cannot_change_who_is_asking(turn_world: TurnWorld, fake_anthropic: FakeModelServer) -> None:
    fake_anthropic.script(
        [
            Call("run_sql", {"database": "erp", "sql": "SELECT COUNT(*) FROM EMP_MST", "user": "operator"}),
            Call("open_table_card", {"database": "erp", "table": "EMP_MST", "principal": "admin"}),
            Say("no"),
        ]
    )
    turn_id = turn_world.submit("Count employees", user="U_GUEST")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    assert "no permission" in fake_anthropic.requests[1].exchange.tool_results["run_sql"]
    assert "no permission" in fake_anthropic.requests[2].exchange.tool_results["open_table_card"]


def test_a_database_the_user_may_not_query_is_refused(turn_world: TurnWorld, fake_anthropic: FakeModelServer) -> None:
    fake_anthropic.script(
        [
            Call("run_sql", {"database": "billing", "sql": "SELECT COUNT(*) FROM BILL_CUST"}),
            Call("search_tables", {"question": "customers", "databases": ["billing"]}),
            Say("no"),
        ]
    )
    turn_id = turn_world.submit("How many billing customers?", user="U_GUEST")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    assert "may not query database billing" in fake_anthropic.requests[1].exchange.tool_results["run_sql"]
    assert "may not query database 'billing'" in fake_anthropic.requests[2].exchange.tool_results["search_tables"]


def test_join_path_uses_declared_keys_and_never_hidden_tables(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    fake_anthropic.script([Call("find_join_path", {"database": "erp", "tables": ["ORD_DTL_H", "CUST_MST"]}), Say("ok")])
    turn_id = turn_world.submit("Which customers bought which products?", user="U_GUEST")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    text = fake_anthropic.requests[1].exchange.tool_results["find_join_path"]
    assert "Shortest path: ORD_DTL_H(ORD_NO) = ORD_MST(ORD_NO) → ORD_MST(CUST_ID) = CUST_MST(CUST_ID)" in text
    assert "EMP_MST" not in text


def test_pins_limit_search_to_the_pinned_database(turn_world: TurnWorld, fake_anthropic: FakeModelServer) -> None:
    fake_anthropic.script([Call("search_tables", {"question": "customers"}), Say("ok")])
    turn_id = turn_world.submit("How many customers?", pins=("billing",))
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    text = fake_anthropic.requests[1].exchange.tool_results["search_tables"]
    assert text.startswith("searched 1 of 2 databases: billing")
    assert "The user pinned the search to: billing" in fake_anthropic.requests[0].exchange.user_text
