"""No silent wrong answers on the guided path (`workers.turns.guided_checks`): a statement that ran is checked
against the question before the answer goes out; a literal the data writes otherwise is rewritten without a model
call, anything else gets one repair call, and a doubt that remains is said in one line with the status `partial`.
A `local:` model is the fake OpenAI-compatible server; search, the SQL service, the probes and the store are real."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from tests.fakes.model_server import Call, Exchange, FakeOpenAIServer, Say, Step
from tests.gbnf import as_regex
from tests.turn_world import TurnWorld

SMALL = {"model": "local:small"}
Y2024 = "ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01'"
#: How the SQL call of a repair begins its hint (after a check, or an empty result).
REPAIR_HINT = "An earlier query"


def sql_model(statement: str, repaired: str = "") -> Callable[[Exchange], Step]:
    """A model that writes `statement` whenever asked for SQL for the question (every candidate alike), and
    `repaired` (else `statement` again) when the SQL call carries a repair's hint; it keeps the tables it is offered
    when asked to choose."""

    def step(exchange: Exchange) -> Step:
        if "run_sql" in exchange.tools:
            hinted = REPAIR_HINT in exchange.user_text
            return Call("run_sql", {"sql": repaired if hinted and repaired else statement})
        if "choose_tables" in exchange.tools:
            return Call("choose_tables", {"tables": ["ORD_MST"]})
        return Say("no tool offered")

    return step


def sql_prompts(server: FakeOpenAIServer) -> list[str]:
    return [r.exchange.user_text for r in server.requests if "run_sql" in r.exchange.tools]


def repairs(server: FakeOpenAIServer) -> list[str]:
    return [p for p in sql_prompts(server) if REPAIR_HINT in p]


def test_a_carrier_code_for_a_city_gets_one_repair_and_then_says_its_doubt(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    carrier = "SELECT COUNT(*) FROM SHIP_HIST WHERE CARRIER_CD = 'KP'"
    fake_openai.script(sql_model(carrier))
    turn_id = turn_world.submit("How many orders shipped to Busan in 2024?", thread="checks carrier")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial", stored
    lines = stored["answer"].split("\n")
    assert lines[-1] == (
        "I filtered on CARRIER_CD = 'KP' (Korea Post), which the question does not name; say if you meant 'Busan' "
        "as ORD_MST.SHIP_CITY."
    )
    assert f"{turn_world.erp_scalar(carrier):,}" in lines[0]  # the figure is still shown, with its doubt
    guided = stored["result"]["guided"]
    assert (guided["step"], guided["repaired"], guided["checks"]) == ("doubt", "check", ["code"])
    [repair] = repairs(fake_openai)  # one repair, no more
    assert repair == sql_prompts(fake_openai)[-1]
    assert "means Korea Post, which the question does not ask for" in repair
    assert "CREATE TABLE ORD_MST (" in repair  # the table holding the question's value is offered to the repair


def test_the_repair_that_filters_on_the_named_value_is_the_answer(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    carrier = "SELECT COUNT(*) FROM SHIP_HIST WHERE CARRIER_CD = 'KP'"
    city = f"SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan' AND {Y2024}"
    fake_openai.script(sql_model(carrier, city))
    turn_id = turn_world.submit("How many orders shipped to Busan in 2024?", thread="checks carrier repaired")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert f"{turn_world.erp_scalar(city):,}" in stored["answer"]
    assert "say if you meant" not in stored["answer"]
    assert stored["result"]["sql"][-1]["sql"] == city  # the answer's result is the repaired statement's


def test_a_korean_city_is_read_as_the_value_the_column_holds_without_another_model_call(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    korean = f"SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = '부산' AND {Y2024}"
    fake_openai.script(sql_model(korean))
    turn_id = turn_world.submit("2024년 부산으로 배송된 주문은 몇 건인가요?", thread="checks korean")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    expected = turn_world.erp_scalar(korean.replace("부산", "Busan"))
    assert stored["status"] == "answered", stored
    assert f"{expected:,}" in stored["answer"]
    assert "I read '부산' as 'Busan', as ORD_MST.SHIP_CITY writes it." in stored["answer"].split("\n")
    assert [run["rows"] for run in stored["result"]["sql"]] == [[[0]], [[expected]]]
    assert not repairs(fake_openai)
    assert stored["result"]["guided"]["checks"] == ["rewrite"]


def test_a_snapshot_the_thread_asked_about_is_not_carried_into_a_question_that_does_not(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.script(sql_model("SELECT COUNT(*) FROM ORD_MST_202312"))
    first = turn_world.submit("How many orders were in the December 2023 snapshot?", thread="checks snapshot")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), first)
    stale, live = "SELECT SUM(TOT_AMT) FROM ORD_MST_202312", "SELECT SUM(TOT_AMT) FROM ORD_MST"
    fake_openai.script(sql_model(stale, live))
    requests_before = len(fake_openai.requests)
    follow_up = turn_world.submit("show me revenue", thread="checks snapshot")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), follow_up)

    stored = turn_world.turn(follow_up)
    assert stored["status"] == "answered", stored
    assert f"{turn_world.erp_scalar(live):,}" in stored["answer"]
    prompts = [r.exchange.user_text for r in fake_openai.requests[requests_before:] if "run_sql" in r.exchange.tools]
    assert "CREATE TABLE ORD_MST_202312" not in prompts[0]  # the copy is not offered to this question
    assert "Earlier question" not in prompts[0]  # nor what the earlier question said of it (its month)
    assert "ORD_MST_202312 is a snapshot copy of ORD_MST: read ORD_MST" in prompts[-1]
    assert stored["result"]["guided"]["checks"] == ["copy"]

    # a follow-up that asks for the snapshot itself is written with the earlier question
    fake_openai.script(sql_model(stale))
    requests_before = len(fake_openai.requests)
    again = turn_world.submit("and their total amount in that snapshot?", thread="checks snapshot")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), again)
    prompts = [r.exchange.user_text for r in fake_openai.requests[requests_before:] if "run_sql" in r.exchange.tools]
    assert "Earlier question in this conversation: show me revenue" in prompts[0]
    assert f"{turn_world.erp_scalar(stale):,}" in turn_world.turn(again)["answer"]


def test_a_single_total_for_a_breakdown_by_month_is_partial_with_its_doubt(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    total = f"SELECT SUM(TOT_AMT) FROM ORD_MST WHERE {Y2024}"
    fake_openai.script(sql_model(total))
    turn_id = turn_world.submit("What was our total sales amount by month in 2024?", thread="checks by month")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial", stored
    assert stored["answer"].split("\n")[-1] == (
        "The question asks for a breakdown (per month), but this is a single figure."
    )
    assert "one row per month" in sql_prompts(fake_openai)[-1]


def test_months_written_as_digits_are_read_as_digits_without_another_model_call(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    julian = "SELECT strftime('%Y-%m', SALES_YM) AS month, SUM(AMT) AS sales FROM SALES_2024 GROUP BY month"
    fake_openai.script(sql_model(julian))
    turn_id = turn_world.submit("What was our total sales amount by month in 2024?", thread="checks digits")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    first, last = stored["result"]["sql"]
    assert len(first["rows"]) == 1  # every month read as one Julian day of year -4158
    expected = "SELECT substr(SALES_YM, 1, 4) || '-' || substr(SALES_YM, 5, 2), SUM(AMT) FROM SALES_2024 GROUP BY 1"
    with sqlite3.connect(turn_world.erp_path) as conn:
        assert last["rows"] == [list(row) for row in conn.execute(expected)]
    assert len(last["rows"]) > 1
    assert last["rows"][0][0] == "2024-01"
    assert "I read SALES_YM ('2024" in stored["answer"]
    assert not repairs(fake_openai)


def test_a_join_that_matched_nothing_is_named_to_the_call_that_writes_the_query_again(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    # the code table's own column is read, so the join cannot simply be left out
    on_group = (
        "SELECT T2.GRP_NM, COUNT(*) FROM PRD_MST AS T1 JOIN CODE_MST AS T2 ON T1.CTGRY_CD = T2.CODE_GRP "
        "GROUP BY T2.GRP_NM ORDER BY COUNT(*) DESC LIMIT 1"
    )
    alone = "SELECT CTGRY_CD, COUNT(*) FROM PRD_MST GROUP BY CTGRY_CD ORDER BY COUNT(*) DESC LIMIT 1"
    fake_openai.script(sql_model(on_group, alone))
    turn_id = turn_world.submit("Which product category has the most products?", thread="checks empty join")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert stored["result"]["sql"][-1]["rows"][0][0] == turn_world.erp_scalar(alone)
    hint = repairs(fake_openai)[-1]
    assert "An earlier query returned no rows" in hint
    assert "The join condition T1.CTGRY_CD = T2.CODE_GRP matches no rows: PRD_MST.CTGRY_CD holds values such as" in hint
    assert "and CODE_MST.CODE_GRP values such as 'CARRIER', 'CUST_GRD'" in hint


def test_a_join_that_matched_nothing_and_only_filtered_is_left_out_without_another_model_call(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    on_group = (
        "SELECT T1.CTGRY_CD, COUNT(*) AS Product_Count FROM PRD_MST AS T1 INNER JOIN CODE_MST AS T2 "
        "ON T1.CTGRY_CD = T2.CODE_GRP WHERE T2.USE_YN = 'Y' GROUP BY T1.CTGRY_CD ORDER BY COUNT(*) DESC LIMIT 1"
    )
    alone = "SELECT CTGRY_CD, COUNT(*) FROM PRD_MST GROUP BY CTGRY_CD ORDER BY COUNT(*) DESC LIMIT 1"
    fake_openai.script(sql_model(on_group))
    turn_id = turn_world.submit("Which product category has the most products?", thread="checks filter join")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    last = stored["result"]["sql"][-1]
    assert "CODE_MST" not in last["sql"]
    assert "USE_YN" not in last["sql"]
    assert last["rows"][0][0] == turn_world.erp_scalar(alone)
    code = last["rows"][0][0]
    meaning = turn_world.erp_scalar(f"SELECT CODE_NM FROM CODE_DTL WHERE CODE_GRP = 'PRD_CTGRY' AND CODE_CD = '{code}'")
    # the code said with its meaning from the card; the source is the table the answer read, not the one left out
    assert stored["answer"].split("\n")[:2] == [
        f"{code} ({meaning}) has the most products (Product_Count: {last['rows'][0][1]}).",
        "From erp.PRD_MST.",
    ]
    assert (
        "I left out the join of CODE_MST on PRD_MST.CTGRY_CD = CODE_MST.CODE_GRP, and its filter CODE_MST.USE_YN = "
        "'Y': the joined columns share no values, so with it the query found no rows."
    ) in stored["answer"].split("\n")
    assert not repairs(fake_openai)  # no model call wrote the statement again


def test_a_filtering_join_on_a_column_the_table_lacks_is_left_out_instead_of_a_repair_call(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    joined = (
        "SELECT AVG(T1.TOT_AMT) FROM ORD_MST AS T1 INNER JOIN PRD_MST AS T2 ON T1.PRD_CD = T2.PRD_CD "
        f"WHERE T2.USE_YN = 'Y' AND {Y2024.replace('ORD_DT', 'T1.ORD_DT')}"
    )
    alone = f"SELECT AVG(TOT_AMT) FROM ORD_MST WHERE {Y2024}"
    fake_openai.script(sql_model(joined))
    turn_id = turn_world.submit("What was the average order amount in 2024?", thread="checks missing column")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    first, last = stored["result"]["sql"][0], stored["result"]["sql"][-1]
    assert first["error"]
    assert "PRD_MST" not in last["sql"]
    assert last["rows"][0][0] == pytest.approx(turn_world.erp_scalar(alone))
    assert (
        "I left out the join of PRD_MST on ORD_MST.PRD_CD = PRD_MST.PRD_CD, and its filter PRD_MST.USE_YN = 'Y': "
        "ORD_MST has no column PRD_CD."
    ) in stored["answer"].split("\n")
    assert not [r for r in fake_openai.requests if "run_sql" in r.exchange.tool_errors]  # no repair call


def test_a_join_on_a_column_only_the_table_in_between_holds_goes_through_that_table(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    direct = (
        "SELECT T1.CTGRY_CD, COUNT(T2.RET_NO) AS RET_COUNT FROM PRD_MST AS T1 INNER JOIN RET_DTL AS T2 "
        "ON T1.PRD_CD = T2.PRD_CD GROUP BY T1.CTGRY_CD ORDER BY RET_COUNT DESC LIMIT 1"
    )
    through = (
        "SELECT p.CTGRY_CD, COUNT(r.RET_NO) FROM PRD_MST AS p JOIN ORD_DTL_H AS l ON l.PRD_CD = p.PRD_CD "
        "JOIN RET_DTL AS r ON r.ORD_NO = l.ORD_NO AND r.LINE_NO = l.LINE_NO GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
    )
    fake_openai.script(sql_model(direct))
    turn_id = turn_world.submit("Which product categories had the most returns?", thread="checks in between")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    last = stored["result"]["sql"][-1]
    assert "ORD_DTL_H" in last["sql"]
    with sqlite3.connect(turn_world.erp_path) as conn:
        assert last["rows"] == [list(row) for row in conn.execute(through)]
    assert "I joined RET_DTL to PRD_MST through ORD_DTL_H: RET_DTL has no column PRD_CD." in stored["answer"]
    assert not [r for r in fake_openai.requests if "run_sql" in r.exchange.tool_errors]  # no repair call


def test_a_selected_column_its_table_lacks_is_read_from_the_shown_table_holding_it(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    lines_only = (
        "SELECT l.CTGRY_CD, SUM(l.QTY) AS units FROM ORD_DTL_H AS l GROUP BY l.CTGRY_CD ORDER BY 2 DESC LIMIT 1"
    )
    read = (
        "SELECT p.CTGRY_CD, SUM(l.QTY) FROM ORD_DTL_H AS l JOIN PRD_MST AS p ON l.PRD_CD = p.PRD_CD "
        "GROUP BY p.CTGRY_CD ORDER BY 2 DESC LIMIT 1"
    )
    fake_openai.script(sql_model(lines_only))
    turn_id = turn_world.submit("Which product category sold the most units?", thread="checks looked up")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    first, last = stored["result"]["sql"][0], stored["result"]["sql"][-1]
    assert first["error"]
    assert "JOIN PRD_MST ON l.PRD_CD = PRD_MST.PRD_CD" in last["sql"]
    with sqlite3.connect(turn_world.erp_path) as conn:
        assert last["rows"] == [list(row) for row in conn.execute(read)]
    assert (
        "I read CTGRY_CD from PRD_MST, joined to ORD_DTL_H on ORD_DTL_H.PRD_CD = PRD_MST.PRD_CD: ORD_DTL_H has no "
        "column CTGRY_CD."
    ) in stored["answer"].split("\n")
    assert not [r for r in fake_openai.requests if "run_sql" in r.exchange.tool_errors]  # no repair call


def test_an_active_flag_the_question_does_not_name_is_said_in_the_answer(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    active = "SELECT COUNT(*) FROM CUST_MST WHERE USE_YN = 'Y'"
    fake_openai.script(sql_model(active))
    turn_id = turn_world.submit("How many customers are registered?", thread="checks flag")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert stored["result"]["sql"][-1]["rows"] == [[turn_world.erp_scalar(active)]]
    assert (
        "I kept only the rows where CUST_MST.USE_YN = 'Y' (the table's active or deleted flag), which the question "
        "does not name; say if you meant every row."
    ) in stored["answer"].split("\n")


def test_a_grouping_a_one_figure_question_did_not_ask_for_is_dropped_without_another_model_call(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    by_month = f"SELECT SUM(TOT_AMT) AS total FROM ORD_MST WHERE {Y2024} GROUP BY SUBSTR(ORD_DT, 1, 7) ORDER BY 1"
    fake_openai.script(sql_model(by_month))
    turn_id = turn_world.submit("What was the total order amount in 2024?", thread="checks ungrouped")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    total = turn_world.erp_scalar(f"SELECT SUM(TOT_AMT) FROM ORD_MST WHERE {Y2024}")
    assert stored["status"] == "answered", stored
    first, last = stored["result"]["sql"]
    assert len(first["rows"]) > 1  # one row per month, as the model wrote it
    assert last["rows"] == [[total]]
    assert "GROUP BY" not in last["sql"]
    assert "the question asks for one figure over all the rows" in stored["answer"]
    assert not repairs(fake_openai)


def test_a_status_nobody_asked_for_is_left_out_without_another_model_call(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    paid_twice = "SELECT COUNT(*) FROM ORD_MST WHERE PAY_MTHD_CD = '01' AND STATUS_CODE = '20'"
    fake_openai.script(sql_model(paid_twice, paid_twice.replace("= '20'", "!= '20'")))
    turn_id = turn_world.submit("How many orders were paid by credit card?", thread="checks left out")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    card = turn_world.erp_scalar("SELECT COUNT(*) FROM ORD_MST WHERE PAY_MTHD_CD = '01'")
    assert stored["result"]["sql"][-1]["rows"] == [[card]]
    assert "I left out the filter STATUS_CODE = '20', which the question does not ask for." in stored["answer"]
    assert not repairs(fake_openai)  # the repair would have written STATUS_CODE != '20'


def test_unlabelled_sums_per_order_for_a_question_asking_no_breakdown_become_one_figure(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    per_order = "SELECT SUM(TOT_AMT) AS revenue FROM ORD_MST GROUP BY ORD_NO"
    fake_openai.script(sql_model(per_order))
    turn_id = turn_world.submit("show me revenue", thread="checks unlabelled")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert stored["result"]["sql"][-1]["rows"] == [[turn_world.erp_scalar("SELECT SUM(TOT_AMT) FROM ORD_MST")]]
    assert "I left out the query's grouping" in stored["answer"]
    assert not repairs(fake_openai)


def test_the_sql_call_is_constrained_by_a_grammar_of_the_shown_tables_and_columns(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    orders = f"SELECT COUNT(*) FROM ORD_MST WHERE {Y2024}"
    fake_openai.script(sql_model(orders))
    turn_id = turn_world.submit("How many orders were placed in 2024?", thread="checks grammar")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    assert turn_world.turn(turn_id)["status"] == "answered"
    request = next(r for r in fake_openai.requests if "run_sql" in r.exchange.tools)
    assert "response_format" not in request.raw  # the grammar replaces the JSON schema
    grammar = request.raw["grammar"]
    # the call's fixed start is the assistant's reply so far; the grammar constrains the statement after it
    assert request.exchange.prefill == '{"tool": "run_sql", "arguments": {"sql": "'
    assert request.raw["messages"][-1] == {"role": "assistant", "content": request.exchange.prefill}
    assert grammar.split("\n")[0] == 'root ::= argument "\\"}}"'
    written = as_regex(grammar, "root")
    assert written.fullmatch('SELECT ORD_DT, SHIP_CITY FROM ORD_MST"}}')
    assert not written.fullmatch('SELECT ORD_DATE FROM ORD_MST"}}')  # a column it was not shown
    assert "ORD_MST_BAK" not in grammar
    assert "ORD_MST_202312" not in grammar


def test_rows_of_an_identifier_written_otherwise_are_said_as_that_identifiers(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    other = "SELECT COUNT(*) FROM ORD_MST WHERE CUST_ID = 'C000551'"
    fake_openai.script(sql_model(other))
    turn_id = turn_world.submit("How many orders did customer C0551 place?", thread="checks identifier")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial", stored
    lines = stored["answer"].split("\n")
    assert lines[0] == f"Customer C000551 placed {turn_world.erp_scalar(other):,} orders."  # not C0551's
    assert lines[-1] == "I filtered on CUST_ID = 'C000551', which the question does not name; it names 'C0551'."
    assert "'C0551'" in repairs(fake_openai)[0]  # the repair was asked to filter on the question's


def test_a_date_argument_no_table_has_is_read_from_the_one_date_column_after_a_failed_repair(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    broken = "SELECT strftime('%Y-%m', d day) AS month, SUM(AMT) AS sales FROM SALES_2024 GROUP BY month"
    unknown = "SELECT strftime('%Y-%m', d) AS month, SUM(AMT) AS sales FROM SALES_2024 GROUP BY month"

    written: list[str] = []

    def step(exchange: Exchange) -> Step:
        if "run_sql" in exchange.tools:  # a statement that does not parse, then a repair naming no real column
            written.append(unknown if written else broken)
            return Call("run_sql", {"sql": written[-1]})
        if "choose_tables" in exchange.tools:
            return Call("choose_tables", {"tables": ["SALES_2024"]})
        return Say("no tool offered")

    fake_openai.script(step)
    turn_id = turn_world.submit("What was our total sales amount by month in 2024?", thread="checks date argument")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    expected = "SELECT substr(SALES_YM, 1, 4) || '-' || substr(SALES_YM, 5, 2), SUM(AMT) FROM SALES_2024 GROUP BY 1"
    with sqlite3.connect(turn_world.erp_path) as conn:
        assert stored["result"]["sql"][-1]["rows"] == [list(row) for row in conn.execute(expected)]
    assert "I read the dates from SALES_2024.SALES_YM" in stored["answer"]
    assert written[:2] == [broken, unknown]  # the repair named no real column either: no model call read SALES_YM


def test_a_flag_on_a_column_the_table_lacks_is_left_out_without_another_model_call(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    flagged = f"SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan' AND {Y2024} AND USE_YN = 'Y'"

    def step(exchange: Exchange) -> Step:  # the customers are shown too: their card marks USE_YN as a flag
        if "choose_tables" in exchange.tools:
            return Call("choose_tables", {"tables": ["ORD_MST", "CUST_MST"]})
        return sql_model(flagged)(exchange)

    fake_openai.script(step)
    question = "How many orders did VIP customers have shipped to Busan in 2024?"
    turn_id = turn_world.submit(question, thread="checks unknown flag")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    city = f"SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan' AND {Y2024}"
    assert stored["result"]["sql"][-1]["rows"] == [[turn_world.erp_scalar(city)]]
    assert "I left out the filter USE_YN = 'Y', which the question does not ask for." in stored["answer"]
    assert not repairs(fake_openai)
