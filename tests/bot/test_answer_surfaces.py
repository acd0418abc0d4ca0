"""One answer, every surface: Slack's table block, Slack's monospace table, the Teams card, the console and the
guided path's answer sentence show each result cell the same way (`core.answer.values`)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from bot.console import ConsoleView
from bot.slack.blocks import answer_blocks, result_table
from bot.slack.results import DATA_TABLE
from bot.teams.cards import answer_card
from core.answer.model import Answer, ResultTable
from core.answer.values import ValueKind as K
from workers.tools.base import SqlRecord
from workers.turns.guided_answers import rows_answer

COLUMNS = ["ORD_ID", "ORD_YEAR", "ORDERS", "TOT_AMT", "AVG_QTY", "SHIP_DT", "PAID", "NOTE"]
KINDS = [K.IDENTIFIER, K.YEAR, K.COUNT, K.AMOUNT, K.NUMBER, K.DATE, K.BOOLEAN, K.TEXT]
ROWS: list[list[Any]] = [
    [10234, 2024, 4750, 3691987750.5, 3.14159, "2024-03-01T00:00:00", True, None],
    [10235, 2023, 12, 12, 0.5, "2024-03-02T09:30:00", False, "rush"],
]
EXPECTED = [
    ["10234", "2024", "4,750", "3,691,987,750.50", "3.14", "2024-03-01", "yes", "\u2014"],
    ["10235", "2023", "12", "12.00", "0.5", "2024-03-02 09:30", "no", "rush"],
]
TABLE = ResultTable(database="erp", sql="SELECT ...", columns=COLUMNS, kinds=list(KINDS), rows=ROWS)
ANSWER = Answer(status="answered", text="Two orders.", tables_used=["erp.ORD_MST"], results=[TABLE])


def test_the_shared_cells_are_the_expected_ones() -> None:
    assert TABLE.cells() == EXPECTED


def test_slack_table_block_shows_the_shared_cells() -> None:
    [table] = [b for b in answer_blocks(ANSWER) if b["type"] == "table"]
    rows = [[cell["text"] for cell in row] for row in table["rows"]]
    assert rows == [COLUMNS, *EXPECTED]


def test_slack_data_table_block_shows_the_shared_cells_and_sorts_numbers_by_value() -> None:
    [table] = [b for b in answer_blocks(ANSWER, table=DATA_TABLE) if b["type"] == "data_table"]
    assert [[cell["text"] for cell in row] for row in table["rows"]] == [COLUMNS, *EXPECTED]
    numbers = [cell for row in table["rows"][1:] for cell in row if cell["type"] == "raw_number"]
    assert [(c["value"], c["text"]) for c in numbers][:3] == [(10234, "10234"), (2024, "2024"), (4750, "4,750")]


def test_slack_monospace_table_shows_the_shared_cells_in_order() -> None:
    few = TABLE.model_copy(update={"columns": COLUMNS[:4], "kinds": KINDS[:4], "rows": [r[:4] for r in ROWS]})
    lines = result_table(few).split("\n")
    assert [line.split() for line in lines[2:]] == [row[:4] for row in EXPECTED]


def _teams_rows(card: dict[str, Any]) -> list[list[str]]:
    [table] = [e for e in card["body"] if e.get("type") == "Table"]
    return [[_texts(cell) for cell in row["cells"]] for row in table["rows"]]


def test_teams_card_shows_the_shared_cells() -> None:
    card = answer_card(ANSWER)
    rows = _teams_rows(card)
    shown = len(rows[0])  # the card shows the first MAX_COLUMNS columns
    assert rows == [COLUMNS[:shown], *[row[:shown] for row in EXPECTED]]
    [table] = [e for e in card["body"] if e.get("type") == "Table"]
    fallback = [[_texts(c) for c in row["columns"]] for row in table["fallback"]["items"]]
    assert fallback == rows  # a client without the Table element shows the same cells


def test_console_shows_the_shared_cells() -> None:
    table = ConsoleView(Console(file=io.StringIO())).rows(TABLE, "SQL on erp")
    columns = [[str(cell) for cell in column.cells] for column in table.columns]
    assert [list(row) for row in zip(*columns, strict=True)] == EXPECTED


def test_the_guided_answer_sentence_uses_the_shared_cells() -> None:
    for column, kind, value, shown in zip(COLUMNS[:5], KINDS[:5], ROWS[0][:5], EXPECTED[0][:5], strict=True):
        record = SqlRecord("erp", "SELECT ...", [column], [[value]], False, None, [kind])
        first = rows_answer(f"What is the {column}?", record, ["erp.ORD_MST"]).split("\n")[0]
        assert first == f"The {column} is {shown}."


def _texts(element: Any) -> str:
    found: list[str] = []
    if isinstance(element, dict):
        if element.get("type") in ("TextBlock", "TextRun"):
            found.append(element["text"])
        for value in element.values():
            found.append(_texts(value))
    elif isinstance(element, list):
        found += [_texts(value) for value in element]
    return "".join(found)


def test_headers_and_why_these_tables_read_the_same_everywhere() -> None:
    counted = ResultTable(database="erp", sql="SELECT ...", columns=["SHIP_CITY", "COUNT(*)"], rows=[["Busan", 351]])
    note = "From the live order master table (ORD_MST); the backup copy ORD_MST_BAK was left out."
    answer = ANSWER.model_copy(update={"results": [counted], "sources_note": note})

    [table] = [b for b in answer_blocks(answer) if b["type"] == "table"]
    assert [cell["text"] for cell in table["rows"][0]] == ["SHIP_CITY", "count"]
    assert note in str(answer_blocks(answer))

    card = answer_card(answer)
    assert _teams_rows(card)[0] == ["SHIP_CITY", "count"]
    assert note in _texts(card)

    out = io.StringIO()
    ConsoleView(Console(file=out, width=200)).answer(answer)
    shown = out.getvalue()
    assert "count" in shown
    assert "COUNT(*)" not in shown.split("SELECT")[0]  # the header, not the statement
    assert note in shown
