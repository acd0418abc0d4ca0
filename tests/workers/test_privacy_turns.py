"""Privacy mode end to end: every request the model server receives during turns on the sample ERP holds none of
the source's values with `privacy: schema_only`, and holds them without it (so the check can fail).

The values are read from the source databases themselves: every distinct text value of every column and every
number that is not trivial (a fraction, or a whole number of four digits or more that is not a year), less the
values that are also a table or column name (the schema, which the mode sends). The scripted model opens every
kind of tool result (search, cards, join paths, table lists, SQL rows and an SQL error), a note quoting values is
on the table it reads, and a second turn follows the first in the thread, so an earlier answer is in its history.
What the model itself wrote (its tool-call arguments) is not searched: those words are its own.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.access.users import UserRef
from core.store.repositories import sources as source_repo
from search.notes import save_note
from tests.fakes.model_server import Call, Calls, Exchange, FakeModelServer, Say, Step
from tests.turn_world import TurnWorld
from tests.workers.turns.scripts import first_value
from workers.turns.private_answers import PRIVACY_NOTE

pytestmark = pytest.mark.timeout(300)

QUESTION = "How many orders went to each city?"
FOLLOW_UP = "And what does that mean for the month?"
_BOUNDARY = "0-9A-Za-z_"


def _source_values(paths: list[Path]) -> set[str]:
    """The values to look for (module doc): every distinct value of every column of the databases, in the forms
    it may be written in, less the trivial ones and those that are also a table or column name or a part of one."""
    values: set[str] = set()
    names: set[str] = set()
    for path in paths:
        with sqlite3.connect(path) as conn:
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in tables:
                columns = [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]
                for name in [table, *columns]:
                    names.update(n.casefold() for n in [name, *name.split("_")])
                for column in columns:
                    for (value,) in conn.execute(f'SELECT DISTINCT "{column}" FROM "{table}"'):
                        values.update(_forms(value))
    return {v for v in values if v.casefold() not in names}


def _forms(value: Any) -> list[str]:
    """How a value may be written in a request, or [] for a trivial one: a text of one or two characters ("Y",
    "KR") cannot be told from the words around it (the unit tests of each redaction check that codes and
    frequent values are left out whatever their length), nor can a small whole number or a year."""
    if isinstance(value, str):
        text = " ".join(value.split())
        if re.fullmatch(r"-?\d+(\.\d+)?", text):
            return _forms(float(text)) if "." in text else _forms(int(text))
        return [text] if len(text) >= 3 else []
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, float) and not value.is_integer():
        return [repr(value), f"{value:.2f}"]
    number = int(value)
    if abs(number) >= 1000 and not 1900 <= number <= 2100:
        return [str(number)]
    return []


def _texts(value: Any, into: list[str]) -> None:
    """Every string in a request body, leaving out the model's own tool calls (their arguments are its words)."""
    if isinstance(value, dict):
        if value.get("type") == "tool_use":  # Anthropic: a tool call the model made
            return
        for key, item in value.items():
            if key != "tool_calls":  # OpenAI: the model's tool calls
                _texts(item, into)
    elif isinstance(value, list):
        for item in value:
            _texts(item, into)
    elif isinstance(value, str):
        into.append(value)


def _leaked(server: FakeModelServer, values: set[str], since: int = 0) -> set[str]:
    texts: list[str] = []
    for request in server.requests[since:]:
        _texts(request.raw.get("system"), texts)
        _texts(request.raw.get("messages"), texts)
    haystack = "\n".join(texts)
    tokens = set(re.findall(f"[{_BOUNDARY}]+", haystack))
    found = set()
    for value in values:
        head = re.match(f"[{_BOUNDARY}]+", value)
        if head is not None and head.group() not in tokens:
            continue  # a value written in the text starts with a whole word of it
        whole_word = head is not None and head.group() == value
        pattern = f"(?<![{_BOUNDARY}]){re.escape(value)}(?![{_BOUNDARY}])"
        if whole_word or (value in haystack and re.search(pattern, haystack)):
            found.add(value)
    return found


def _model(note_table: str) -> Any:
    def step(exchange: Exchange) -> Step:
        if FOLLOW_UP in exchange.user_text:
            return Say("That follows from the earlier query.")
        if exchange.round == 1:
            return Call("search_tables", {"question": "orders by status and customer city"})
        if exchange.round == 2:
            return Calls(
                [
                    ("open_table_card", {"database": "erp", "table": note_table}),
                    ("open_table_card", {"database": "erp", "table": "CUST_MST"}),
                    ("open_table_card", {"database": "erp", "table": "CODE_DTL"}),
                    ("open_table_card", {"database": "erp", "table": "WH_MST"}),
                    ("open_table_card", {"database": "erp", "table": "SHIP_HIST"}),
                    ("open_table_card", {"database": "billing", "table": "INV_HDR"}),
                    ("find_join_path", {"database": "erp", "tables": ["ORD_MST", "CUST_MST"]}),
                    ("list_tables", {"database": "erp"}),
                ]
            )
        if exchange.round == 3:
            return Calls(
                [
                    ("run_sql", {"database": "erp", "sql": "SELECT CUST_NM, CITY_NM, EMAIL FROM CUST_MST LIMIT 40"}),
                    ("run_sql", {"database": "erp", "sql": "SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CTY IS NULL"}),
                    ("run_sql", {"database": "billing", "sql": "SELECT CUST_NAME, TAX_ID FROM BILL_CUST LIMIT 40"}),
                    ("run_sql", {"database": "erp", "sql": "SELECT * FROM CODE_DTL"}),
                ]
            )
        if exchange.round == 4:
            sql = "SELECT SHIP_CITY, COUNT(*) AS ORDERS FROM ORD_MST GROUP BY SHIP_CITY ORDER BY 2 DESC"
            return Call("run_sql", {"database": "erp", "sql": sql})
        result = exchange.tool_results.get("run_sql", "")
        if result.startswith("SHIP_CITY | ORDERS\n"):  # it reads rows (privacy mode off): it quotes the top one
            return Say(f"Most orders went to {first_value(result)}.")
        return Say("This counts the orders shipped to each city.")

    return step


@pytest.fixture(scope="module")
def values(turn_world: TurnWorld) -> set[str]:
    billing = turn_world.erp_path.with_name("billing.sqlite")
    return _source_values([turn_world.erp_path, billing])


@pytest.fixture
def quoting_note(turn_world: TurnWorld, forget_notes: None) -> str:
    """A note on ORD_MST quoting a city and a customer of the sample, as a user would write one."""
    with sqlite3.connect(turn_world.erp_path) as conn:
        city, customer = conn.execute("SELECT CITY_NM, CUST_NM FROM CUST_MST ORDER BY CUST_ID LIMIT 1").fetchone()
    with turn_world.installation.store.transaction() as session:
        source = source_repo.by_name(session, "erp")
        assert source is not None
        save_note(
            session,
            _operator(),
            turn_world.encoders.embedder,
            database="erp",
            tables=["ORD_MST"],
            text=f"Orders shipped to {city} for {customer} are test orders; leave them out",
            author=UserRef("slack", "U_SALES"),
            private=False,
        )
    return "ORD_MST"


def _operator() -> Any:
    from core.access.permissions import Principal

    return Principal.for_operator()


@pytest.fixture
def privacy_on(turn_world: TurnWorld) -> Iterator[None]:
    path = turn_world.settings.config_path
    before = path.read_text()
    path.write_text("privacy: schema_only\n" + before)
    try:
        yield
    finally:
        path.write_text(before)


def _run_both(turn_world: TurnWorld, server: FakeModelServer, thread: str, turn_path: str = "auto") -> tuple[int, int]:
    env = turn_world.environment(server, turn_path=turn_path)
    first = turn_world.submit(QUESTION, thread=thread)
    assert turn_world.run(env, first).status == "answered", turn_world.turn(first)
    second = turn_world.submit(FOLLOW_UP, thread=thread)
    assert turn_world.run(env, second).status == "answered", turn_world.turn(second)
    return first, second


@pytest.mark.parametrize(
    ("provider", "path"),
    [("fake_anthropic", "auto"), ("fake_openai", "auto"), ("fake_openai", "guided")],
    ids=["anthropic", "openai", "openai-guided-setting"],
)
def test_no_source_value_reaches_the_model_in_privacy_mode(
    turn_world: TurnWorld,
    values: set[str],
    quoting_note: str,
    privacy_on: None,
    provider: str,
    path: str,
    request: pytest.FixtureRequest,
) -> None:
    server: FakeModelServer = request.getfixturevalue(provider)
    server.script(_model(quoting_note))
    first, second = _run_both(turn_world, server, thread=f"privacy on {provider} {path}", turn_path=path)
    assert "search_tables" in server.requests[0].exchange.tools  # the tool loop, also where the guided path is set
    assert len(server.requests) == 6
    assert _leaked(server, values) == set()

    answer = turn_world.turn(first)
    stored = answer["result"]
    assert PRIVACY_NOTE in stored["warnings"]
    last = stored["sql"][-1]
    assert last["columns"] == ["SHIP_CITY", "ORDERS"]
    cities = turn_world.erp_scalar("SELECT COUNT(*) FROM (SELECT SHIP_CITY FROM ORD_MST GROUP BY SHIP_CITY)")
    assert len(last["rows"]) == cities  # the user still gets every row
    top = f"{last['rows'][0][1]:,}"
    assert top in answer["answer"].splitlines()[0]  # the sentence is written from the rows, here
    assert "This counts the orders shipped to each city." in answer["answer"]
    assert PRIVACY_NOTE in turn_world.turn(second)["result"]["warnings"]


def test_the_same_turns_without_privacy_mode_send_values(
    turn_world: TurnWorld, values: set[str], quoting_note: str, fake_anthropic: FakeModelServer
) -> None:
    fake_anthropic.script(_model(quoting_note))
    _first, _second = _run_both(turn_world, fake_anthropic, thread="privacy off")
    leaked = _leaked(fake_anthropic, values)
    with sqlite3.connect(turn_world.erp_path) as conn:
        city, customer = conn.execute("SELECT CITY_NM, CUST_NM FROM CUST_MST ORDER BY CUST_ID LIMIT 1").fetchone()
    assert {city, customer} <= leaked  # the note and the rows
    assert len(leaked) > 50
    assert "Seoul" in _leaked(fake_anthropic, values, since=5)  # the follow-up's request: the earlier answer
