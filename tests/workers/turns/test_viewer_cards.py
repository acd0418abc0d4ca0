"""What surrounds the SQL counts for the reader under their own row filters and column masks (issue 30 items 1, 2, 3
and 5), on SQLite, MariaDB and PostgreSQL: code meanings read from a masked or filtered table, cards of plain views
over masked and filtered tables, value matches through a view, code lists and shares of a filtered table, the "no
such column" hint, join bases and database summaries. Turns with a scripted model run the real tools; the expected
figures come from the same rows in SQLite, read directly."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pytest

from core.access.permissions import resolve_principal
from core.cards.database_summary import summary_for
from core.store.repositories import sources as source_repo
from tests.fakes.model_server import Call, FakeModelServer, Say
from tests.support import run_cli
from tests.workers.turns.viewer_world import ENGINES, SOURCES, ViewerWorld, viewer_world

__all__ = ["viewer_world"]  # the fixture, used by the tests below


def _tools(
    world: ViewerWorld, server: FakeModelServer, user: str, calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[str]:
    """Run one turn whose model makes `calls` in order; the tool results it read, in order."""
    server.script([*(Call(tool, args) for tool, args in calls), Say("done")])
    first = len(server.requests)
    turn_id = world.world.submit("What do our Busan orders look like?", user=user, thread=f"T{len(server.requests)}")
    world.world.run(world.world.environment(server), turn_id)
    return [server.requests[first + i].exchange.tool_results[tool] for i, (tool, _) in enumerate(calls, start=1)]


def _cli(world: ViewerWorld, *args: str) -> Any:
    settings = world.world.settings
    assert settings.database_url is not None
    found = run_cli(settings.home, *args, env={"TABLESCOUT_DATABASE_URL": settings.database_url.get_secret_value()})
    assert found.returncode == 0, found.stderr
    return found.stdout


def _names(world: ViewerWorld) -> list[str]:
    return [str(name) for (name,) in world.erp_rows('SELECT "EMP_NM" FROM "EMP_MST"')]


@pytest.mark.parametrize("engine", ENGINES)
def test_code_meanings_read_from_a_masked_and_filtered_table_are_withheld(
    viewer_world: ViewerWorld, fake_anthropic: FakeModelServer, engine: str
) -> None:
    """Item 1: ORD_MST.EMP_NO's codes mean EMP_MST.EMP_NM, hash-masked for U1 and filtered to one department."""
    db = SOURCES[engine]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_table_card", {"database": db, "table": "ORD_MST"}),
        ("search_tables", {"question": "orders by employee", "databases": [db]}),
    ]
    names = _names(viewer_world)
    everyone = "\n".join(_tools(viewer_world, fake_anthropic, "U_ALL", calls))
    assert any(name in everyone for name in names), "the meanings are there for a user who may read them"
    for text in _tools(viewer_world, fake_anthropic, "U1", calls):
        assert [name for name in names if name in text] == [], text
        assert "EMP_NO" in text


@pytest.mark.parametrize("engine", ENGINES)
def test_a_view_card_counts_and_masks_what_its_base_tables_allow(
    viewer_world: ViewerWorld, fake_anthropic: FakeModelServer, engine: str
) -> None:
    """Item 2: a plain view over EMP_MST's salary and e-mail, and one over CUST_MST's contacts."""
    db = SOURCES[engine]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("open_table_card", {"database": db, "table": "V_EMP_PAY"}),
        ("open_table_card", {"database": db, "table": "V_CUST_CONTACT"}),
    ]
    pay, contact = _tools(viewer_world, fake_anthropic, "U1", calls)
    salaries = {str(int(v)) for (v,) in viewer_world.erp_rows('SELECT "SAL_AMT" FROM "EMP_MST"') if v is not None}
    mails = {str(v) for (v,) in viewer_world.erp_rows('SELECT "EMAIL" FROM "EMP_MST"') if v}
    mails |= {str(v) for (v,) in viewer_world.erp_rows('SELECT "EMAIL" FROM "CUST_MST"') if v}
    staff = viewer_world.erp_rows("SELECT COUNT(*) FROM EMP_MST WHERE DEPT_CD = 'D10'")[0][0]
    customers = viewer_world.erp_rows("SELECT COUNT(*) FROM CUST_MST WHERE CITY_NM = 'Busan'")[0][0]
    assert f"{staff:,} rows you may read" in pay, pay
    assert re.search(r"- PAY [^|]+\| masked for you \(hash\)", pay), pay
    assert re.search(r"- MAILU [^|]+\| masked for you \(redact\)", pay), pay
    assert [s for s in salaries if s in pay] == []
    assert f"{customers:,} rows you may read" in contact, contact
    assert re.search(r"- EMAIL [^|]+\| masked for you \(hash\)", contact), contact
    assert re.search(r"- TEL_NO [^|]+\| masked for you \(null\)", contact), contact  # hidden behind: NULL here
    assert [m for m in mails if m in pay + contact] == []
    assert "D11" not in pay, "the department codes are those of the rows U1 reads"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_value_only_hidden_rows_hold_is_no_signal_through_a_view(
    viewer_world: ViewerWorld, fake_anthropic: FakeModelServer, engine: str
) -> None:
    """Item 3: Jinju is a city only orders outside Busan ship to; Busan is U1's own."""
    db = SOURCES[engine]
    jinju: list[tuple[str, dict[str, Any]]] = [
        ("search_tables", {"question": "orders shipped to Jinju", "databases": [db]})
    ]
    [everyone] = _tools(viewer_world, fake_anthropic, "U_ALL", jinju)
    assert "SHIP_CITY = 'Jinju'" in everyone, everyone
    [text] = _tools(viewer_world, fake_anthropic, "U1", jinju)
    assert "= 'Jinju'" not in text, text
    busan: list[tuple[str, dict[str, Any]]] = [
        ("search_tables", {"question": "orders shipped to Busan", "databases": [db]})
    ]
    [text] = _tools(viewer_world, fake_anthropic, "U1", busan)
    holding = [
        line for line in text.splitlines() if line.strip().startswith("holds:") and "SHIP_CITY = 'Busan'" in line
    ]
    assert holding, "a value the reader's own rows hold still finds the table"
    ranked = [line.split()[1].split(".")[1] for line in text.splitlines() if re.match(r"\d+\. ", line)]
    assert {"ORD_MST", "V_ORD"} <= set(ranked[:6]), ranked


def test_the_search_command_gives_a_view_no_value_signal_from_hidden_rows(viewer_world: ViewerWorld) -> None:
    """Item 3 as reported: `search "orders shipped to Jinju" --user slack:U1`."""
    found = json.loads(
        _cli(viewer_world, "search", "orders shipped to Jinju", "--db", "erp", "--user", "slack:U1", "--json")
    )
    # the one value found is the status "Shipped": in the code table, and as the code meaning it in the orders
    said = {v.get("meaning") or v["value"] for c in found["candidates"] for v in c.get("values", [])}
    assert said == {"Shipped"}, said
    assert all("Jinju" not in json.dumps(c.get("values", [])) for c in found["candidates"])


def test_code_lists_and_shares_of_a_filtered_table_are_counted_on_the_readers_rows(viewer_world: ViewerWorld) -> None:
    """Item 5: EMP_MST filtered to D10 listed every department with shares over all 80 employees (18 / 0.225 gave
    the hidden total away); ORD_MST's status shares were over every order."""
    employees = json.loads(_cli(viewer_world, "card", "erp", "EMP_MST", "--user", "slack:U1", "--json"))
    columns = {c["name"]: c for c in employees["columns"]}
    assert [c["code"] for c in columns["DEPT_CD"]["codes"]] == ["D10"]
    assert columns["DEPT_CD"]["codes"][0]["share"] == 1.0
    assert employees["row_count"] == 18
    assert employees["rows_filtered"] is True
    orders = json.loads(_cli(viewer_world, "card", "erp", "ORD_MST", "--user", "slack:U1", "--json"))
    shown = {c["code"]: c["share"] for c in {c["name"]: c for c in orders["columns"]}["STATUS_CODE"]["codes"]}
    counted = dict(
        viewer_world.erp_rows(
            "SELECT STATUS_CODE, COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan' GROUP BY STATUS_CODE"
        )
    )
    total = sum(counted.values())
    assert shown == {code: round(n / total, 4) for code, n in counted.items()}
    text = _cli(viewer_world, "card", "erp", "ORD_MST", "--user", "slack:U1")
    assert f"{total:,} rows you may read" in text
    assert "Jung Eun-ji" not in text
    assert "sampled values" not in text


@pytest.mark.parametrize("engine", ENGINES)
def test_the_no_such_column_hint_never_names_a_hidden_column(
    viewer_world: ViewerWorld, fake_anthropic: FakeModelServer, engine: str
) -> None:
    """Item 5: TEL_NO is hidden from U1; the hint after an unknown column listed it as a column of CUST_MST."""
    db = SOURCES[engine]
    quote = '"' if engine == "postgres" else ""  # SQLite reads an unknown "NAME" as a string
    asked = f"SELECT {quote}TEL_NO{quote} FROM {quote}CUST_MST{quote}"
    unknown = f"SELECT {quote}TEL_NUMBER{quote} FROM {quote}CUST_MST{quote}"
    [everyone] = _tools(viewer_world, fake_anthropic, "U_ALL", [("run_sql", {"database": db, "sql": unknown})])
    assert "TEL_NO" in everyone.split("\n", 1)[1], everyone
    [text] = _tools(viewer_world, fake_anthropic, "U1", [("run_sql", {"database": db, "sql": asked})])
    listed = next(line for line in text.splitlines() if line.startswith("Columns of CUST_MST: "))
    assert "TEL_NO" not in listed, text
    assert "is a column of" not in text, text


def test_join_bases_of_a_filtered_table_carry_no_sample_figures(
    viewer_world: ViewerWorld, fake_anthropic: FakeModelServer
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("find_join_path", {"database": "erp", "tables": ["ORD_MST", "EMP_MST"]})
    ]
    [everyone] = _tools(viewer_world, fake_anthropic, "U_ALL", calls)
    assert "sampled values" in everyone, everyone
    [text] = _tools(viewer_world, fake_anthropic, "U1", calls)
    assert "EMP_MST(EMP_NO)" in text, text
    assert "sampled values" not in text, text


def test_a_database_summary_names_only_what_the_reader_may_see(
    viewer_world: ViewerWorld, fake_anthropic: FakeModelServer
) -> None:
    """Item 5: the summary the model reads for a user denied INV_* named INV_HDR with its row count."""
    world = viewer_world.world
    with world.installation.store.transaction() as session:
        billing = source_repo.by_name(session, "billing")
        erp = source_repo.by_name(session, "erp")
        assert billing is not None
        assert erp is not None
        config = world.settings.file
        everyone = summary_for(session, resolve_principal(session, config, "slack", "U_ALL"), billing)
        clerk = summary_for(session, resolve_principal(session, config, "slack", "U_BILL"), billing)
        sales = summary_for(session, resolve_principal(session, config, "slack", "U1"), erp)
        stored = erp.summary
    assert everyone is not None
    assert "INV_HDR" in everyone
    assert clerk is not None
    assert "INV" not in clerk, clerk
    assert stored is not None
    assert "about" in stored
    assert "ORD_MST_BAK" in stored
    assert sales is not None
    assert "about" not in sales, "no total over tables filtered for the reader"
    assert "ORD_MST_BAK" not in sales
    assert "(ORD_MST)" in sales
    assert not re.search(r"ORD_MST, [\d,]+\)", sales), sales
    fake_anthropic.script([Say("done")])
    turn_id = world.submit("How much did we invoice last month?", user="U_BILL", thread="T_SUMMARY")
    world.run(world.environment(fake_anthropic), turn_id)
    first = " ".join(str(m["content"]) for m in fake_anthropic.requests[-1].raw["messages"])
    assert "billing" in first, first
    assert "INV_HDR" not in first, first
    assert "INV_LINE" not in first, first
