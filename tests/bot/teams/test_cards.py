"""Adaptive Card rendering of answer payloads."""

from __future__ import annotations

import json
from typing import Any

from bot.teams.cards import (
    CARD_CONTENT_TYPE,
    answer_card,
    answer_summary,
    card_attachment,
    status_text,
)
from bot.teams.result_table import FALLBACK_ROWS, MAX_COLUMNS
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


def table_rows(card: dict[str, Any]) -> list[list[str]]:
    """The texts of the card's result Table, row by row (header first)."""
    tables = [b for b in card["body"] if b["type"] == "Table"]
    return [["".join(texts(cell)) for cell in row["cells"]] for table in tables for row in table["rows"]]


def check_structure(card: dict[str, Any]) -> None:
    """What Teams requires of an Adaptive Card: type, a version it renders, a body of typed elements."""
    assert card["type"] == "AdaptiveCard"
    assert card["version"] == "1.4"
    assert card["$schema"].startswith("http://adaptivecards.io/schemas/")
    assert isinstance(card["body"], list)
    assert card["body"]
    old = {"TextBlock", "RichTextBlock", "ColumnSet", "Column", "TextRun", "Container"}  # schema 1.4
    allowed = old | {"Table", "TableRow", "TableCell"}  # 1.5, each Table with a 1.4 fallback

    def walk(element: Any, allowed: set[str] = allowed) -> None:
        if isinstance(element, dict):
            if "type" in element:
                assert element["type"] in allowed, element
            if element.get("type") == "Table":
                width = len(element["columns"])
                assert all(len(row["cells"]) == width for row in element["rows"])
                walk(element["fallback"], old)  # what a 1.4 client shows instead
                walk(element["rows"], allowed)
                return
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
    for action in card.get("actions", []):
        assert action["type"] == "Action.OpenUrl"
        assert action["url"].startswith("https://")
    assert len(json.dumps(card).encode()) < 28_000  # Teams' limit for a message


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
    assert table_rows(card) == [["n"], ["42"]]
    assert "Tables used: erp.ORD_MST" in shown
    assert not any("truncated" in t for t in shown)


def test_large_result_is_capped_and_says_so() -> None:
    columns = [f"C{i}" for i in range(9)]
    rows = [[f"r{r}c{c}" for c in range(9)] for r in range(25)]
    run = {"database": "erp", "sql": "SELECT * FROM T", "columns": columns, "rows": rows, "truncated": True}
    card = answer_card(payload(sql=[run]))
    check_structure(card)
    shown_rows = table_rows(card)
    assert len(shown_rows) > 15  # as many rows as the card holds, six columns each
    assert shown_rows == [columns[:MAX_COLUMNS], *(r[:MAX_COLUMNS] for r in rows[: len(shown_rows) - 1])]
    [table] = [b for b in card["body"] if b["type"] == "Table"]
    fallback = table["fallback"]["items"]
    assert [texts(r) for r in fallback] == [columns[:MAX_COLUMNS], *(r[:MAX_COLUMNS] for r in rows[:FALLBACK_ROWS])]
    shown = texts(card)
    cut = f"first {len(shown_rows) - 1} of 25 rows and " if len(shown_rows) < 26 else ""
    assert f"Showing the {cut}first {MAX_COLUMNS} of 9 columns." in shown
    assert any("truncated at the row limit" in t for t in shown)
    assert "Ask me to narrow the question to see the rest here." in shown  # no link to offer
    assert "actions" not in card


def test_a_result_larger_than_the_card_links_to_all_its_rows() -> None:
    rows = [[f"city {r}", r * 1000] for r in range(400)]
    run = {"database": "erp", "sql": "SELECT city, n FROM T", "columns": ["city", "n"], "rows": rows}
    answer = payload(sql=[run]).model_copy(update={"file_key": "42-" + "k" * 24})
    card = answer_card(answer, "https://bot.example.com/")
    check_structure(card)
    shown_rows = table_rows(card)
    assert 10 < len(shown_rows) - 1 < 400
    assert shown_rows[5] == ["city 4", "4,000"]
    assert f"Showing the first {len(shown_rows) - 1} of 400 rows." in texts(card)
    assert card["actions"] == [
        {
            "type": "Action.OpenUrl",
            "title": "Download all 400 rows (CSV)",
            "url": "https://bot.example.com/files/42-kkkkkkkkkkkkkkkkkkkkkkkk/result-1.csv",
        }
    ]
    assert "actions" not in answer_card(answer)  # no address to link to: the card says so instead


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
    values = table_rows(card)[1]
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
    assert not table_rows(card)  # no result to show
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
