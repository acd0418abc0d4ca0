"""Adaptive Card rendering of answer payloads."""

from __future__ import annotations

import json
from typing import Any

from bot.teams.cards import (
    CARD_CONTENT_TYPE,
    MAX_COLUMNS,
    MAX_ROWS,
    answer_card,
    answer_summary,
    card_attachment,
    status_text,
)
from core.answer.model import Answer


def payload(**overrides: Any) -> Answer:
    base: dict[str, Any] = {
        "status": "answered",
        "answer": "42 orders shipped to Busan last month.",
        "rounds": 3,
        "tables_used": ["erp.ORD_MST"],
        "sql": [
            {
                "database": "erp",
                "sql": "SELECT COUNT(*) AS n FROM ORD_MST WHERE SHIP_CITY = 'Busan'",
                "columns": ["n"],
                "rows": [[42]],
                "truncated": False,
                "error": None,
            }
        ],
        "notes_saved": [],
    }
    base.update(overrides)
    return Answer.from_stored(base)


def texts(element: Any) -> list[str]:
    """Every text shown anywhere in a card element, in order."""
    found: list[str] = []
    if isinstance(element, dict):
        if element.get("type") in ("TextBlock", "TextRun"):
            found.append(element["text"])
        for value in element.values():
            found.extend(texts(value))
    elif isinstance(element, list):
        for value in element:
            found.extend(texts(value))
    return found


def check_structure(card: dict[str, Any]) -> None:
    """What Teams requires of an Adaptive Card: type, a version it renders, a body of typed elements."""
    assert card["type"] == "AdaptiveCard"
    assert card["version"] == "1.4"
    assert card["$schema"].startswith("http://adaptivecards.io/schemas/")
    assert isinstance(card["body"], list)
    assert card["body"]
    allowed = {"TextBlock", "RichTextBlock", "ColumnSet", "Column", "TextRun"}

    def walk(element: Any) -> None:
        if isinstance(element, dict):
            if "type" in element:
                assert element["type"] in allowed, element
            if element.get("type") == "RichTextBlock":
                assert all(run["type"] == "TextRun" and isinstance(run["text"], str) for run in element["inlines"])
            if element.get("type") == "ColumnSet":
                assert all(col["type"] == "Column" for col in element["columns"])
            for value in element.values():
                walk(value)
        elif isinstance(element, list):
            for value in element:
                walk(value)

    walk(card["body"])
    json.dumps(card)  # JSON-ready


def test_answer_card_shows_answer_sql_result_and_tables() -> None:
    card = answer_card(payload())
    check_structure(card)
    shown = texts(card)
    assert shown[0] == "42 orders shipped to Busan last month."
    assert "SQL on erp" in shown
    assert "SELECT COUNT(*) AS n FROM ORD_MST WHERE SHIP_CITY = 'Busan'" in shown
    sql_run = next(
        run
        for block in card["body"]
        if block["type"] == "RichTextBlock"
        for run in block["inlines"]
        if run["text"].startswith("SELECT")
    )
    assert sql_run["fontType"] == "Monospace"
    tables = [b for b in card["body"] if b["type"] == "ColumnSet"]
    assert texts(tables) == ["n", "42"]
    assert "Tables used: erp.ORD_MST" in shown
    assert not any("truncated" in t for t in shown)


def test_large_result_is_capped_and_says_so() -> None:
    columns = [f"C{i}" for i in range(9)]
    rows = [[f"r{r}c{c}" for c in range(9)] for r in range(25)]
    run = {"database": "erp", "sql": "SELECT * FROM T", "columns": columns, "rows": rows, "truncated": True}
    card = answer_card(payload(sql=[run]))
    check_structure(card)
    row_sets = [b for b in card["body"] if b["type"] == "ColumnSet"]
    assert len(row_sets) == 1 + MAX_ROWS
    assert all(len(rs["columns"]) == MAX_COLUMNS for rs in row_sets)
    assert texts(row_sets[0]) == columns[:MAX_COLUMNS]
    assert texts(row_sets[-1]) == rows[MAX_ROWS - 1][:MAX_COLUMNS]
    shown = texts(card)
    assert f"Showing the first {MAX_ROWS} of 25 rows and first {MAX_COLUMNS} of 9 columns." in shown
    assert any("truncated at the row limit" in t for t in shown)


def test_values_are_formatted_and_long_text_clipped() -> None:
    run = {
        "database": "erp",
        "sql": "SELECT a, b, c, d FROM T",
        "columns": ["a", "b", "c", "d"],
        "rows": [[None, 1234567, 2.5, "x" * 500]],
        "truncated": False,
        "error": None,
    }
    card = answer_card(payload(sql=[run], answer="y" * 10_000))
    values = texts([b for b in card["body"] if b["type"] == "ColumnSet"][1])
    assert values[:3] == ["\u2014", "1,234,567", "2.5"]
    assert len(values[3]) <= 60
    assert values[3].endswith("\u2026")
    assert len(texts(card)[0]) <= 4000
    assert len(json.dumps(card)) < 20_000


def test_failed_query_partial_status_and_notes() -> None:
    runs = [
        {"database": "erp", "sql": "SELECT x FROM NOPE", "columns": [], "rows": [], "error": "no such table NOPE"},
    ]
    card = answer_card(payload(status="partial", sql=runs, tables_used=[], notes_saved=["erp.ORD_MST_BAK"]))
    check_structure(card)
    shown = texts(card)
    assert shown[0] == "Partial answer"
    assert "Failed: no such table NOPE" in shown
    assert not [b for b in card["body"] if b["type"] == "ColumnSet"]  # no result to show
    assert "Noted for: erp.ORD_MST_BAK" in shown
    assert not any(t.startswith("Tables used") for t in shown)


def test_answer_without_sql_and_empty_result() -> None:
    card = answer_card(payload(sql=[], tables_used=[]))
    check_structure(card)
    assert texts(card) == ["42 orders shipped to Busan last month."]
    empty = {"database": "erp", "sql": "SELECT n FROM T", "columns": ["n"], "rows": [], "truncated": False}
    assert "The query returned no rows." in texts(answer_card(payload(sql=[empty])))


def test_only_the_last_queries_are_shown() -> None:
    runs = [{"database": "erp", "sql": f"SELECT {i}", "columns": ["v"], "rows": [[i]]} for i in range(5)]
    shown = texts(answer_card(payload(sql=runs)))
    assert "SELECT 0" not in shown
    assert "SELECT 4" in shown
    assert "2 earlier queries not shown." in shown


def test_summary_status_text_and_attachment() -> None:
    assert answer_summary(payload()) == "42 orders shipped to Busan last month."
    assert len(answer_summary(payload(answer="word " * 200))) <= 200
    assert answer_summary(payload(answer="")) == "tablescout answered"
    markdown = "## Orders\n\nThere were **4750** orders in *2024*, from [ORD_MST](https://wiki.example/ORD_MST)."
    assert answer_summary(payload(answer=markdown)) == "Orders There were 4750 orders in 2024, from ORD_MST."
    assert texts(answer_card(payload(answer=markdown)))[0] == markdown  # the card itself renders the Markdown
    assert status_text("Searching tables\u2026") == "\u23f3 Searching tables\u2026"
    attachment = card_attachment(answer_card(payload()))
    assert attachment["contentType"] == CARD_CONTENT_TYPE == "application/vnd.microsoft.card.adaptive"
    assert attachment["content"]["type"] == "AdaptiveCard"
