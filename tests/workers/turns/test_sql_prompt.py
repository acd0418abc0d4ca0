"""The guided SQL call's message (`workers.turns.guided_sql.sql_prompt`): the schema first, then the approved
examples or, with none, only the built-in idioms that fit the question's shape."""

from __future__ import annotations

from workers.turns.guided_sql import sql_prompt
from workers.turns.selection import Selection

SCHEMA = "CREATE TABLE orders (\n  id INTEGER PRIMARY KEY,\n  day TEXT\n);"


def prompt(question: str, engine: str = "sqlite") -> str:
    return sql_prompt(question, Selection(database="shop", engine=engine, schema=SCHEMA))


def test_the_schema_comes_first_and_a_plain_question_gets_no_idiom() -> None:
    text = prompt("How many orders are there?")
    assert text.startswith(f"SQLite database shop, the most relevant tables first:\n\n{SCHEMA}")
    assert "idioms" not in text
    assert text.endswith("Question: How many orders are there?")


def test_only_the_idioms_of_the_question_shape_are_shown_in_the_engine_dialect() -> None:
    monthly = prompt("How many orders by month in 2024?")
    assert "SELECT strftime('%Y-%m', d.day) AS month, COUNT(*) FROM d GROUP BY month ORDER BY month;" in monthly
    assert "LIMIT" not in monthly
    assert "NOT IN" not in monthly
    assert "to_char(d.day, 'YYYY-MM')" in prompt("How many orders per month?", engine="postgresql")
    top = prompt("Which five customers spent the most?")
    assert "ORDER BY total DESC LIMIT 5;" in top
    assert "GROUP BY month" not in top
    assert "NOT IN (SELECT b.a_id FROM b)" in prompt("Find the owners who do not own any dogs.")
    assert "100.0 * SUM(CASE WHEN" in prompt("What percentage of orders were cancelled?")
