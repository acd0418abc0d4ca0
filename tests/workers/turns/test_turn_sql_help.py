"""What run_sql does for a model's SQL beyond running it: rewrites what SQLite lacks (and the database name used as a
qualifier), names the columns and tables to use after "no such column" / "no such table" (only those the user may
see), and refuses to run a statement that already failed in the turn. Also the compact results and the context
overflow of the local model's provider."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from sqlalchemy import select

from core.store.models import ExecutedSql
from tests.fakes.model_server import Call, Fail, FakeModelServer, FakeOpenAIServer, Say
from tests.turn_world import TurnWorld
from tests.workers.turns.scripts import ORDERS_2024, candidates
from workers.models.json_replies import REPEATED_SQL
from workers.tools import sql_help
from workers.tools.base import SqlRecord, ToolContext

QUESTION = "How many orders were placed in 2024?"


def executed(turn_world: TurnWorld, turn_id: int) -> list[ExecutedSql]:
    with turn_world.installation.store.transaction() as session:
        rows = session.scalars(select(ExecutedSql).where(ExecutedSql.turn_id == turn_id).order_by(ExecutedSql.id))
        return [session.merge(row) for row in rows]


def test_year_and_the_database_name_are_rewritten_for_sqlite(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    written = "SELECT COUNT(*) FROM erp.ORD_MST WHERE YEAR(ORD_DT) = 2024"
    ran = "SELECT COUNT(*) FROM ORD_MST WHERE CAST(STRFTIME('%Y', ORD_DT) AS INTEGER) = 2024"
    fake_anthropic.script([Call("run_sql", {"database": "erp", "sql": written}), Say("done")])
    turn_id = turn_world.submit(QUESTION)
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)

    result = fake_anthropic.requests[1].exchange.tool_results["run_sql"]
    assert "run_sql" not in fake_anthropic.requests[1].exchange.tool_errors
    assert result.startswith(f"Ran as: {ran}\n(dropped the database name erp before table names; SQLite has no YEAR()")
    expected = turn_world.erp_scalar(ORDERS_2024)
    assert f"\n{expected}\n" in result
    stored = turn_world.turn(turn_id)
    [run] = stored["result"]["sql"]
    assert (run["sql"], run["rows"], run["error"]) == (ran, [[expected]], None)  # the SQL shown is the SQL that ran
    assert stored["tables_used"] == ["erp.ORD_MST"]
    assert [(r.sql, r.status) for r in executed(turn_world, turn_id)] == [(ran, "ok")]


def test_unknown_columns_and_tables_get_the_names_the_user_may_use(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    statements = [
        "SELECT COUNT(*) FROM ORD_MST AS o JOIN ORD_CHG_LOG AS l ON o.ORD_NO = l.ORD_NO WHERE l.STATUS_CODE = '90'",
        "SELECT SUM(LINE_AMT) FROM ORD_DTL_H",
        "SELECT COUNT(*) FROM PRD_STK_INV",  # allowed by the guest's PRD_* grant, close to STK_INV they may not see
    ]
    fake_anthropic.script([*(Call("run_sql", {"database": "erp", "sql": sql}) for sql in statements), Say("done")])
    turn_id = turn_world.submit("How many orders were cancelled?", user="U_GUEST")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)

    results = [fake_anthropic.requests[n].exchange.tool_results["run_sql"] for n in range(1, 4)]
    assert all("run_sql" in fake_anthropic.requests[n].exchange.tool_errors for n in range(1, 4))
    wrong_alias, unknown_column, unknown_table = results
    assert wrong_alias.startswith("error: no such column: l.STATUS_CODE\n")
    assert "Columns of ORD_MST: ORD_NO, ORD_DT, CUST_ID, EMP_NO, STATUS_CODE," in wrong_alias
    assert "Columns of ORD_CHG_LOG: LOG_SEQ, LOG_DT, ORD_NO, OLD_STAT, NEW_STAT, CHG_USER." in wrong_alias
    assert wrong_alias.endswith("STATUS_CODE is a column of ORD_MST, not of ORD_CHG_LOG (l).")
    assert "Columns of ORD_DTL_H: ORD_NO, LINE_NO, PRD_CD, QTY, UNIT_PRC, AMT." in unknown_column
    assert unknown_table.startswith("error: no such table: PRD_STK_INV\nerp has no table PRD_STK_INV")
    assert "STK_INV" not in unknown_table.replace("PRD_STK_INV", "")

    fake_anthropic.script([Call("run_sql", {"database": "erp", "sql": "SELECT COUNT(*) FROM ORDER_MST"}), Say("done")])
    turn_world.run(turn_world.environment(fake_anthropic), turn_world.submit("How many orders?", thread="order_mst"))
    unknown = fake_anthropic.requests[-1].exchange.tool_results["run_sql"]
    assert "erp has no table ORDER_MST; tables with similar names: ORD_MST, " in unknown


def test_a_statement_that_already_failed_is_not_run_again(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    failing = "SELECT SUM(SALES_AMT) FROM SALES_2023"
    fake_anthropic.script(
        [
            Call("run_sql", {"database": "erp", "sql": failing}),
            Call("run_sql", {"database": "erp", "sql": "  select sum(SALES_AMT)\n FROM SALES_2023 ;"}),
            Call("run_sql", {"database": "erp", "sql": "SELECT SUM(AMT) FROM SALES_2023"}),
            Say("done"),
        ]
    )
    turn_id = turn_world.submit("What were the sales in 2023?")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)

    again = fake_anthropic.requests[2].exchange
    assert again.tool_results["run_sql"].startswith(f"{REPEATED_SQL} in this conversation (error: no such column")
    assert "run_sql" in again.tool_errors
    assert "run_sql" not in fake_anthropic.requests[3].exchange.tool_errors
    assert [r.status for r in executed(turn_world, turn_id)] == ["error", "ok"]  # the repeat never reached the DB


def test_the_local_provider_reads_compact_results_and_ends_honestly_when_its_context_is_full(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer, fake_openai: FakeOpenAIServer
) -> None:
    fake_anthropic.script([Call("search_tables", {"question": QUESTION}), Say("done")])
    turn_world.run(turn_world.environment(fake_anthropic), turn_world.submit(QUESTION))
    full = fake_anthropic.requests[1].exchange.tool_results["search_tables"]

    overflow = "request (12401 tokens) exceeds the available context size (12288 tokens), try increasing it"
    full_context = Fail(400, fake_openai.error_body(400, overflow))
    fake_openai.script([Call("search_tables", {"question": QUESTION}), full_context])
    turn_id = turn_world.submit(QUESTION, thread="compact results")
    turn_world.run(turn_world.environment(fake_openai, model="local:small", turn_path="loop"), turn_id)
    compact = fake_openai.requests[1].exchange.tool_results["search_tables"]

    assert len(candidates(full)) > len(candidates(compact)) >= 3
    # the same ranking cut shorter: the live tables a prefix of the full list's, then copies of those only
    live_compact = [c[:2] for c in candidates(compact) if " of " not in c[2]]
    live_full = [c[:2] for c in candidates(full) if " of " not in c[2]]
    assert live_compact == live_full[: len(live_compact)]
    shown = {table for _, table in live_compact}
    assert all(c[2].split(" of ")[1] in shown for c in candidates(compact) if " of " in c[2])
    assert "   codes: " in full
    assert "   codes: " not in compact
    assert "] Table ORD_MST in erp (" in full
    assert "] Table ORD_MST in erp (" not in compact
    assert len(compact) < len(full) / 2
    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial"
    assert stored["answer"].startswith(
        "I could not finish this answer: the conversation grew longer than the model can read at once."
    )
    assert "outgrew the context window" in stored["error"]


def test_only_a_database_that_answered_makes_a_statement_a_repeat() -> None:
    sql = "SELECT COUNT(*) FROM ORD_MST"
    unreachable = SqlRecord("erp", sql, [], [], False, "error: cannot reach database erp: connection refused")
    context = cast(ToolContext, SimpleNamespace(sql_runs=[unreachable]))
    assert sql_help.earlier_failure(context, "erp", [sql]) is None  # it may answer now: run it again
    context.sql_runs.append(SqlRecord("erp", sql, [], [], False, "timeout: the query ran longer than 30 s"))
    assert (sql_help.earlier_failure(context, "erp", [sql.lower() + " ;"]) or "").startswith(REPEATED_SQL)
    assert sql_help.earlier_failure(context, "billing", [sql]) is None  # the same text on another database
