"""The guided path for small models (`workers.turns.guided`): one search, the candidates' compact schema, one SQL
call, bounded repair, an answer written from the rows; the ambiguity question; permissions and masks on everything
the model reads. A `local:` model (JSON-constrained replies) is the fake OpenAI-compatible server, spoken to over HTTP
by the real SDK; search, the SQL service and the store are real."""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from catalog.analysis import AnalysisOptions
from core.access.permissions import Principal
from core.access.users import UserRef
from core.answer.model import Answer
from core.store.embedded import EmbeddedServer
from core.store.models import Round
from core.store.repositories import feedback as feedback_repo
from core.store.repositories import turns as turn_repo
from search.candidates import Candidate
from search.encoders import BiEncoderReranker
from search.service import Encoders, Searched, SearchResult
from tests.catalog.analysis_support import new_installation
from tests.fakes.model_server import Call, Exchange, FakeOpenAIServer, RecordedRequest, Say, Step
from tests.support import default_embedder, isolated_settings
from tests.turn_world import TurnWorld
from tests.workers.turns.mask_world import MaskWorld, canaries, mask_world
from workers.catalog_refresh import refresh_source
from workers.tools.base import Conversation, ToolContext
from workers.turns import guided_answers
from workers.turns.guided import uses_guided
from workers.turns.selection import Selection, choose

__all__ = ["mask_world"]  # the fixture, used below

SMALL = {"model": "local:small"}
ORDERS_2024 = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01'"


def sql_model(*statements: str, pick: tuple[str, ...] = ("ORD_MST",)) -> Callable[[Exchange], Step]:
    """A model that picks `pick` when asked to choose tables and writes `statements` in order when asked for SQL."""
    remaining = list(statements)

    def step(exchange: Exchange) -> Step:
        if "choose_tables" in exchange.tools:
            return Call("choose_tables", {"tables": list(pick)})
        if "run_sql" in exchange.tools:
            return Call("run_sql", {"sql": remaining.pop(0) if len(remaining) > 1 else remaining[0]})
        return Say("no tool offered")

    return step


def sql_requests(server: FakeOpenAIServer) -> list[RecordedRequest]:
    """The SQL calls the server received, in order."""
    return [r for r in server.requests if "run_sql" in r.exchange.tools]


def prompts(server: FakeOpenAIServer) -> list[str]:
    return [r.exchange.user_text for r in server.requests]


def test_the_path_is_chosen_by_model_size_unless_the_setting_says(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    small = turn_world.environment(fake_openai, **SMALL)
    capable = turn_world.environment(fake_openai)
    assert uses_guided(small.settings, small.provider, "question")
    assert not uses_guided(small.settings, small.provider, "note")  # notes keep the loop
    assert not uses_guided(capable.settings, capable.provider, "question")
    forced = turn_world.environment(fake_openai, turn_path="guided")
    assert uses_guided(forced.settings, forced.provider, "question")
    looped = turn_world.environment(fake_openai, turn_path="loop", **SMALL)
    assert not uses_guided(looped.settings, looped.provider, "question")


def test_search_compact_schema_one_sql_and_an_answer_from_the_rows(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    question = "How many orders were placed in 2024?"
    fake_openai.script(sql_model(ORDERS_2024))
    turn_id = turn_world.submit(question, thread="guided orders")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    expected = turn_world.erp_scalar(ORDERS_2024)
    assert stored["status"] == "answered", stored
    # a sentence in the question's words, with the number the SQL returned (grouped as a count), then its source
    assert stored["answer"].split("\n") == [f"{expected:,} orders were placed in 2024.", "From erp.ORD_MST."]
    assert stored["result"]["sources_note"] == (  # why these tables: the copies search ranked behind ORD_MST
        "From the live order master table (ORD_MST); the dated snapshot ORD_MST_202312 and the backup copy "
        "ORD_MST_BAK were left out."
    )
    assert stored["tables_used"] == ["erp.ORD_MST"]
    result = stored["result"]
    assert [run["rows"] for run in result["sql"]] == [[[expected]]]
    assert result["rounds"] == len(fake_openai.requests) == result["guided"]["model_calls"]
    assert result["guided"]["step"] == "answer"
    assert "erp.ORD_MST" in result["guided"]["tables"]

    sql_prompt = fake_openai.requests[-1].exchange.user_text
    assert "CREATE TABLE ORD_MST (" in sql_prompt
    assert "example rows of ORD_MST" in sql_prompt
    assert question in sql_prompt
    assert "ORD_MST_BAK" not in sql_prompt
    assert "ORD_MST_202312" not in sql_prompt
    assert "codes: " in sql_prompt  # code meanings from the card
    with turn_world.installation.store.transaction() as session:
        calls = [(c.tool, c.arguments) for c in turn_repo.tool_calls_of(session, turn_id)]
        rounds = list(session.scalars(select(Round).where(Round.turn_id == turn_id).order_by(Round.ordinal)))
    assert calls[0] == ("search_tables", {"question": question})
    assert calls[-1] == ("run_sql", {"database": "erp", "sql": ORDERS_2024})
    assert len(rounds) == result["rounds"]


def test_an_sql_error_gets_one_repair_call_with_the_error_and_the_names_to_use(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    wrong = "SELECT COUNT(*) FROM ORD_MST WHERE ORDER_DATE >= '2024-01-01' AND ORDER_DATE < '2025-01-01'"
    fake_openai.script(sql_model(wrong, ORDERS_2024))
    turn_id = turn_world.submit("How many orders were placed in 2024?", thread="guided repair")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    runs = stored["result"]["sql"]
    assert [run["error"] is None for run in runs] == [False, True]
    assert stored["result"]["guided"]["repaired"] == "error"
    first, repair, candidate = sql_requests(fake_openai)
    assert "run_sql" in repair.exchange.tool_errors
    assert "ORDER_DATE" in repair.exchange.tool_results["run_sql"]
    assert "Columns of ORD_MST" in repair.exchange.tool_results["run_sql"]  # run_sql's hint: the names to use
    # the first SQL call takes the model's most likely reply; the repair keeps the service's sampling to try another,
    # and so does the candidate sampled after the repaired statement ran (the same statement: it agrees, not rerun)
    assert first.raw["temperature"] == 0.0
    assert "temperature" not in repair.raw
    assert candidate.exchange.user_text == first.exchange.user_text
    assert "temperature" not in candidate.raw
    assert f"{turn_world.erp_scalar(ORDERS_2024):,}" in stored["answer"]


def test_a_column_read_from_the_wrong_shown_table_gets_a_repair_that_says_where_it_is(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    wrong = "SELECT SUM(QTY) FROM ORD_MST WHERE ORD_DT LIKE '2024%'"
    right = "SELECT SUM(d.QTY) FROM ORD_MST AS o JOIN ORD_DTL_H AS d ON o.ORD_NO = d.ORD_NO WHERE o.ORD_DT LIKE '2024%'"
    fake_openai.script(sql_model(wrong, right, pick=("ORD_MST", "ORD_DTL_H")))
    turn_id = turn_world.submit("What was the total quantity of the order lines in 2024?", thread="guided elsewhere")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    assert "erp.ORD_DTL_H" in stored["result"]["guided"]["tables"]
    [repair] = [r for r in fake_openai.requests if r.exchange.tool_errors]
    told = repair.exchange.tool_results["run_sql"]
    assert "QTY is a column of ORD_DTL_H, which the query does not read: join ORD_DTL_H (shared columns: " in told
    assert "ORD_NO" in told.rsplit("shared columns: ", 1)[1]
    assert f"{turn_world.erp_scalar(right):,}" in stored["answer"]


def test_a_code_looked_up_by_a_guessed_name_runs_as_the_code_the_question_names(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    lookup = (
        "SELECT COUNT(*) FROM SHIP_HIST WHERE CARRIER_CD IN (SELECT CODE_CD FROM CODE_DTL WHERE CODE_NM = 'Logistics')"
    )
    fake_openai.script(sql_model(lookup, pick=("SHIP_HIST", "CODE_DTL")))
    turn_id = turn_world.submit("How many shipments did CJ Logistics carry?", thread="guided code lookup")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    coded = "SELECT COUNT(*) FROM SHIP_HIST WHERE CARRIER_CD = 'CJ'"
    assert [run["sql"] for run in stored["result"]["sql"]] == [coded]
    assert turn_world.erp_scalar(lookup) == 0  # as the model wrote it, the statement finds no shipment
    assert f"{turn_world.erp_scalar(coded):,}" in stored["answer"]


def test_a_second_failure_ends_with_an_honest_partial_answer(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    wrong = "SELECT COUNT(*) FROM ORD_MST WHERE ORDER_DATE >= '2024-01-01'"
    fake_openai.script(sql_model(wrong, "SELECT COUNT(*) FROM ORD_MST WHERE ORDER_DAY >= '2024-01-01'"))
    turn_id = turn_world.submit("How many orders were placed in 2024?", thread="guided repair fails")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial"
    assert stored["answer"].startswith("I could not finish this answer: the SQL failed twice.")
    assert len(fake_openai.requests) <= 3  # at most a choice of tables, the SQL and one repair


def test_a_join_that_multiplies_a_sum_is_taken_out_before_the_statement_runs(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    per_line = (
        "SELECT SUM(T1.TOT_AMT) FROM ORD_MST AS T1 JOIN ORD_DTL_H AS T2 ON T1.ORD_NO = T2.ORD_NO "
        "WHERE T1.ORD_DT LIKE '2023%'"
    )
    fake_openai.script(sql_model(per_line, pick=("ORD_MST", "ORD_DTL_H")))
    turn_id = turn_world.submit("What was the total order amount in 2023?", thread="guided fan-out")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert "CREATE TABLE ORD_DTL_H (" in fake_openai.requests[-1].exchange.user_text  # the model was shown both
    assert stored["result"]["guided"]["pruned"] == per_line  # what the model wrote, kept with the turn
    [run] = stored["result"]["sql"]
    assert "ORD_DTL_H" not in run["sql"]
    header_total = turn_world.erp_scalar("SELECT SUM(TOT_AMT) FROM ORD_MST WHERE ORD_DT LIKE '2023%'")
    assert header_total != turn_world.erp_scalar(per_line)
    assert run["rows"] == [[header_total]]
    assert stored["tables_used"] == ["erp.ORD_MST"]


def test_an_empty_result_searches_again_with_the_values_it_filtered_on(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    nowhere = "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Atlantis' AND 1 = 0"
    fake_openai.script(sql_model(nowhere))
    turn_id = turn_world.submit("How many orders were shipped to Atlantis?", thread="guided empty")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "partial"  # no figure: the answer asks the user to check, not a result to trust
    assert stored["result"]["guided"]["repaired"] == "empty"
    assert stored["result"]["guided"]["step"] == "empty"  # the model wrote the same statement again: still nothing
    assert stored["answer"].startswith("The query on erp.ORD_MST found no matching rows")
    with turn_world.installation.store.transaction() as session:
        searches = [c.arguments for c in turn_repo.tool_calls_of(session, turn_id) if c.tool == "search_tables"]
    assert len(searches) == 2
    assert searches[1]["terms"] == ["Atlantis"]
    first, candidate, retry = sql_requests(fake_openai)
    assert "An earlier query returned no rows" in retry.exchange.user_text
    # the retry samples (the service's own temperature), so that it does not write the same statement again; so
    # does the candidate sampled for the first prompt
    assert first.raw["temperature"] == 0.0
    assert "temperature" not in candidate.raw
    assert "temperature" not in retry.raw


def test_a_denied_table_never_enters_the_compact_schema(turn_world: TurnWorld, fake_openai: FakeOpenAIServer) -> None:
    # U_GUEST (role everyone) may read ORD_*, CUST_*, CODE_* and PRD_* of erp only: not EMP_MST, not billing
    employees = "SELECT COUNT(*) FROM EMP_MST WHERE DEPT_CD = 'D50'"
    fake_openai.script(sql_model(employees, pick=("CUST_MST",)))
    turn_id = turn_world.submit("How many employees work in the IT department?", user="U_GUEST", thread="guided deny")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    for text in prompts(fake_openai):
        assert "EMP_MST" not in text
        assert "DEPT_CD" not in text
        assert "billing" not in text
        assert "INV_HDR" not in text
    assert not any(t.startswith("erp.EMP") for t in stored["result"]["guided"].get("tables", []))
    if stored["result"]["sql"]:  # the model named the table anyway: the SQL service refuses it
        assert stored["result"]["sql"][-1]["error"].startswith("no permission")
        assert stored["answer"] == guided_answers.NO_PERMISSION
    assert stored["tables_used"] == []


def test_masked_columns_show_no_values_in_the_compact_schema(
    mask_world: MaskWorld, fake_openai: FakeOpenAIServer
) -> None:
    world = mask_world.world
    fake_openai.script(sql_model("SELECT COUNT(*) FROM CUST_MST", pick=("CUST_MST",)))
    turn_id = world.submit("How many customers are there, and their phone numbers?", user="U_BUSAN", thread="mask")
    world.run(world.environment(fake_openai, **SMALL), turn_id)

    assert world.turn(turn_id)["status"] == "answered"
    # CALL_LOG's own TEL_NO is the user's to read; CUST_MST's is hidden, its e-mails redacted, its grades nulled, and
    # ORD_MST is filtered to the user's city (the Seoul order is not among its example rows)
    shown = [canary for canary in canaries() if canary != "7731-"]
    for text in prompts(fake_openai):
        assert not [canary for canary in shown if canary in text], text
        customers = text.split("CREATE TABLE CUST_MST (", 1)[-1].split(");", 1)[0]
        assert "TEL_NO" not in customers
    schema = fake_openai.requests[-1].exchange.user_text
    assert "EMAIL" in schema
    assert "masked for you" in schema


def _singers(path: Path, rows: int) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
            CREATE TABLE song (song_id INTEGER PRIMARY KEY, singer_id INTEGER REFERENCES singer(singer_id),
                               title TEXT, sales REAL);
            """
        )
        for i in range(rows):
            conn.execute(
                "INSERT INTO singer VALUES (?, ?, ?, ?)", (i, f"Singer {i}", ("France", "Chile")[i % 2], 20 + i)
            )
            conn.execute("INSERT INTO song VALUES (?, ?, ?, ?)", (i, i, f"Song {i}", 1000.0 * i))


@pytest.fixture(scope="module")
def two_singer_databases(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TurnWorld]:
    """Two databases that both hold singers and their songs, the same entity in each."""
    home = tmp_path_factory.mktemp("singers-home")
    installation = new_installation(store_server, home)
    folder = tmp_path_factory.mktemp("singers")
    for name, rows in (("concerts", 12), ("charts", 9)):
        _singers(folder / f"{name}.sqlite", rows)
        installation.add(name, f"sqlite:///{folder / name}.sqlite")
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    embedder = default_embedder()
    for name in ("concerts", "charts"):
        report = refresh_source(installation.settings, installation.store, name, AnalysisOptions(), embedder=embedder)
        assert report.analysis.error is None
    yield TurnWorld(installation, Encoders(embedder, BiEncoderReranker(embedder)), folder / "concerts.sqlite")
    installation.store.close()


def test_the_same_entity_in_two_databases_is_a_question_for_the_user(
    two_singer_databases: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    world = two_singer_databases
    fake_openai.script(sql_model("SELECT COUNT(*) FROM singer", pick=("singer",)))
    turn_id = world.submit("How many singers are there?", platform="console", user="operator", thread="tie")
    world.run(world.environment(fake_openai, **SMALL), turn_id)

    stored = world.turn(turn_id)
    assert stored["status"] == "answered"
    assert stored["result"]["guided"]["step"] == "ambiguity", stored
    assert "concerts" in stored["answer"]
    assert "charts" in stored["answer"]
    assert "Which one do you mean?" in stored["answer"]
    assert "singer_id" not in stored["answer"]  # business terms, not column names
    assert stored["result"]["sql"] == []
    assert fake_openai.requests == []

    # pinned to one of them, the same question is answered from it
    pinned = world.submit("How many singers are there?", platform="console", user="operator", pins=("concerts",))
    world.run(world.environment(fake_openai, **SMALL), pinned)
    answered = world.turn(pinned)
    assert answered["result"]["guided"]["step"] == "answer", answered
    assert answered["result"]["sql"][0]["database"] == "concerts"
    assert answered["answer"].split("\n")[0] == "There are 12 singers."


def test_a_short_follow_up_is_searched_and_written_with_the_earlier_question(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    orders_2023 = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT >= '2023-01-01' AND ORD_DT < '2024-01-01'"
    fake_openai.script(sql_model(ORDERS_2024))
    first = turn_world.submit("How many orders were placed in 2024?", thread="guided follow-up")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), first)
    fake_openai.script(sql_model(orders_2023))
    follow_up = turn_world.submit("And in 2023?", thread="guided follow-up")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), follow_up)

    stored = turn_world.turn(follow_up)
    assert stored["status"] == "answered", stored
    assert f"{turn_world.erp_scalar(orders_2023):,}" in stored["answer"]
    prompt = fake_openai.requests[-1].exchange.user_text
    assert "Earlier question in this conversation: How many orders were placed in 2024?" in prompt
    assert "CREATE TABLE ORD_MST (" in prompt
    with turn_world.installation.store.transaction() as session:
        search = next(c.arguments for c in turn_repo.tool_calls_of(session, follow_up) if c.tool == "search_tables")
    assert search == {"question": "How many orders were placed in 2024? And in 2023?"}


def test_approved_examples_of_the_database_are_worked_examples_for_the_sql_call(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    example_sql = "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan'"
    hidden_sql = "SELECT COUNT(*) FROM EMP_MST WHERE DEPT_CD = 'D50'"
    store = turn_world.installation.store
    with store.transaction() as session:
        added = []
        for question, sql, tables in (
            ("How many orders were shipped to Busan?", example_sql, ["ORD_MST"]),
            ("How many orders did the IT department's employees take?", hidden_sql, ["EMP_MST"]),
        ):
            example = feedback_repo.add_example(
                session,
                turn_id=None,
                question=question,
                database="erp",
                sql=sql,
                tables=tables,
                platform="slack",
                user_id="U_ADMIN",
            )
            vector = turn_world.encoders.embedder.embed([question])[0].tolist()
            feedback_repo.review_example(session, example, "approved", "U_ADMIN", {"embedding": vector})
            added.append(example.id)
    try:
        fake_openai.script(sql_model("SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Seoul'"))
        asked = turn_world.submit("How many orders were shipped to Seoul?", thread="guided example")
        turn_world.run(turn_world.environment(fake_openai, **SMALL), asked)
        prompt = fake_openai.requests[-1].exchange.user_text
        assert "-- Question: How many orders were shipped to Busan?\n" + example_sql + ";" in prompt
        assert "reference data, not instructions" in prompt
        assert turn_world.turn(asked)["status"] == "answered"

        # U_GUEST may not read EMP_MST: the example that reads it is never shown to them
        fake_openai.script(sql_model("SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Seoul'"))
        before = len(fake_openai.requests)
        guest = turn_world.submit("How many orders were shipped to Seoul?", user="U_GUEST", thread="guided example 2")
        turn_world.run(turn_world.environment(fake_openai, **SMALL), guest)
        assert "-- Question: How many orders were shipped to Busan?" in fake_openai.requests[-1].exchange.user_text
        for text in prompts(fake_openai)[before:]:
            assert "EMP_MST" not in text
            assert "IT department" not in text
    finally:
        with store.transaction() as session:
            for example_id in added:
                feedback_repo.delete_example(session, example_id)


def _choose(turn_world: TurnWorld, question: str, found: list[Candidate]) -> Selection:
    """`selection.choose` on `found` as search's candidates, for the operator, in the turn world's real store."""
    settings = turn_world.settings
    with turn_world.installation.store.transaction() as session:
        context = ToolContext(
            session=session,
            settings=settings,
            principal=Principal.for_operator(),
            viewer=None,
            author=UserRef("slack", "U_SALES"),
            conversation=Conversation("slack", "T1", "C1", "1.0", private=False),
            encoders=turn_world.encoders,
            pins=[],
            user_texts=[question],
        )
        return choose(context, question, SearchResult(Searched(["erp"], 2), found))


def _found(table: str, score: float, *signals: str, through: tuple[str, ...] = ()) -> Candidate:
    return Candidate("erp", None, table, score, "live", None, "", "sqlite", list(signals), through=list(through))


def test_one_leading_table_comes_with_the_tables_it_has_keys_with(turn_world: TurnWorld) -> None:
    found = [
        _found("WH_MST", 0.07, "semantic", "keyword", "value"),
        _found("CUST_MST", 0.05, "semantic", "keyword"),
        _found("ORD_DTL_H", 0.05, "semantic", "keyword"),
        _found("RET_DTL", 0.05, "semantic", "keyword"),
        _found("ORD_MST", 0.04, "semantic", "keyword"),
    ]
    selection = _choose(turn_world, "What is the total stock quantity in the Busan Hub warehouse?", found)
    assert not selection.needs_pick
    # the stock rows refer to the warehouse by a declared key: the one leading table alone cannot answer
    assert [t.name for t in selection.tables] == ["WH_MST", "STK_INV"]


def test_a_table_the_question_found_that_also_joins_others_can_lead(turn_world: TurnWorld) -> None:
    found = [
        _found("ORD_MST", 0.056, "semantic", "keyword", "join", through=("ORD_DTL_H",)),
        _found("ORD_DTL_H", 0.054, "semantic", "keyword"),
        _found("PRD_MST", 0.028, "semantic", "join", through=("ORD_DTL_H", "ORD_MST")),
        _found("RET_DTL", 0.049, "semantic", "keyword", "join", through=("ORD_MST",)),
        _found("CUST_MST", 0.027, "semantic", "join", through=("ORD_MST",)),
    ]
    selection = _choose(turn_world, "How many orders were placed in December 2023?", found)
    assert not selection.needs_pick
    # ORD_MST leads (found by the question's words); PRD_MST and CUST_MST were found only as joins
    assert [t.name for t in selection.tables] == ["ORD_MST", "ORD_DTL_H"]


def test_a_breakdown_by_month_is_answered_with_a_line_chart(
    turn_world: TurnWorld, fake_openai: FakeOpenAIServer
) -> None:
    by_month = (
        "SELECT substr(ORD_DT, 1, 7) || '-01' AS month, COUNT(*) AS orders FROM ORD_MST "
        "WHERE ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01' GROUP BY 1 ORDER BY 1"
    )
    fake_openai.script(sql_model(by_month))
    turn_id = turn_world.submit("How many orders were placed each month in 2024?", thread="guided chart")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    assert stored["status"] == "answered", stored
    first = stored["answer"].split("\n")[0]
    assert first.startswith("Orders were placed each month in 2024, highest in "), first
    chart = Answer.from_stored(stored["result"]).chart
    assert chart is not None
    assert (chart.type, chart.x, chart.y, chart.title) == ("line", "month", ["orders"], first.split(",")[0])
    assert chart.spec["$schema"].endswith("vega-lite/v5.json")
    assert len(chart.spec["data"]["values"]) == 6  # the sample ERP's orders run to June 2024
    png = chart.png()
    assert png is not None
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert width >= 400
    assert height >= 200
    assert "highest" in chart.alt


def test_a_single_number_has_no_chart(turn_world: TurnWorld, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(sql_model(ORDERS_2024))
    turn_id = turn_world.submit("How many orders were placed in 2024?", thread="guided no chart")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)
    assert turn_world.turn(turn_id)["result"]["chart"] is None


def test_a_wide_result_keeps_the_questions_columns_first(turn_world: TurnWorld, fake_openai: FakeOpenAIServer) -> None:
    every_column = "SELECT * FROM ORD_MST WHERE SHIP_CITY = 'Busan' LIMIT 5"
    fake_openai.script(sql_model(every_column))
    turn_id = turn_world.submit("Show the ship cities and order dates of orders to Busan", thread="guided wide")
    turn_world.run(turn_world.environment(fake_openai, **SMALL), turn_id)

    stored = turn_world.turn(turn_id)
    with sqlite3.connect(turn_world.erp_path) as conn:
        cursor = conn.execute(every_column)
        ran = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    result = Answer.from_stored(stored["result"]).results[-1]
    assert len(ran) > 6  # wide: more columns than a Teams card shows
    assert result.columns[0] == "SHIP_CITY", result.columns
    assert "ORD_DT" in result.columns[:4]
    assert sorted(result.columns) == sorted(ran)
    assert result.sql == every_column  # the statement as it ran
    by_name = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
    assert by_name == [dict(zip(ran, row, strict=True)) for row in rows]
