"""The grammar of the guided path's SQL call (`workers.sql.sql_grammar`) inside the JSON reply format
(`workers.models.json_replies.call_grammar`): its words are the shown names, keywords and allowed functions."""

from __future__ import annotations

import json
import re

from workers.models.json_replies import call_grammar
from workers.models.types import ToolSpec
from workers.sql.sql_grammar import function_names, sql_grammar


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.split("\n"))


def test_names_are_the_shown_ones_bare_or_quoted_and_every_rule_it_uses_is_defined() -> None:
    grammar = rules(sql_grammar([("orders", ["id", "ship city"]), ("lines", ["order_id"])], "sqlite", rule="argument"))
    names = grammar["argument-name"]
    assert '"orders"' in grammar["argument-table"]
    assert '"orders"' not in names  # a table is written only where a table may stand
    assert '"order_id"' in names
    assert '"\\\\\\"ship city\\\\\\""' in names  # a name with a space only quoted (a JSON-escaped double quote)
    assert '"ship city"' not in names
    used = {word for body in grammar.values() for word in re.findall(r"argument-[a-z-]+", body)}
    assert used <= set(grammar)
    assert grammar["argument"].startswith('("SELECT" | "select") (" " argument-part)+')


def test_mysql_names_may_take_backticks_and_functions_follow_the_guard() -> None:
    names = rules(sql_grammar([("orders", ["ship city"])], "mysql"))["sql-name"]
    assert '"`ship city`"' in names
    assert "strftime" in function_names("sqlite")
    assert "strftime" not in function_names("postgres")
    assert "sleep" not in function_names("mysql")


def test_the_reply_grammar_calls_the_one_tool_or_gives_the_answer() -> None:
    spec = ToolSpec("run_sql", "Run SQL.", {}, grammar='argument ::= "SELECT 1"', grammar_argument="sql")
    only_call = call_grammar([spec], answer=False)
    assert only_call is not None
    assert only_call.split("\n")[0] == (
        'root ::= "{\\"tool\\": \\"run_sql\\", \\"arguments\\": {\\"sql\\": \\"" argument "\\"}}"'
    )
    with_answer = call_grammar([spec], answer=True)
    assert with_answer is not None
    assert '"{\\"answer\\": \\"" answer-text "\\"}"' in with_answer.split("\n")[0]
    plain = ToolSpec("search_tables", "Search.", {})
    assert call_grammar([plain], answer=False) is None
    assert call_grammar([spec, plain], answer=False) is None  # a choice of tools keeps the JSON schema


_TOKEN = re.compile(r'\s+|"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|[a-z][a-z0-9-]*|[()|?*+]')


def as_regex(grammar: str, rule: str = "sql") -> re.Pattern[str]:
    """The grammar as one regular expression (its rules refer to each other without recursion): literals, character
    classes, groups, alternatives and repetition, as llama.cpp reads them."""
    bodies = rules(grammar)
    done: dict[str, str] = {}

    def expand(name: str) -> str:
        if name not in done:
            parts = []
            for token in _TOKEN.findall(bodies[name]):
                if token.isspace():
                    continue
                if token.startswith('"'):
                    parts.append(re.escape(json.loads(token)))
                elif token.startswith("["):
                    parts.append(token)
                elif token == "(":
                    parts.append("(?:")
                elif token in ")|?*+":
                    parts.append(token)
                else:
                    parts.append(f"(?:{expand(token)})")
            done[name] = "".join(parts)
        return done[name]

    return re.compile(expand(rule))


def test_after_from_and_join_only_shown_tables_or_a_subquery() -> None:
    grammar = as_regex(sql_grammar([("orders", ["id", "city"]), ("lines", ["order_id"])], "sqlite"))
    written = [
        "SELECT COUNT(*) FROM orders",
        "SELECT o.id FROM orders AS o JOIN lines AS l ON o.id=l.order_id WHERE o.city='Busan'",
        "SELECT T1.id FROM orders T1 LEFT JOIN lines T2 ON T1.id = T2.order_id",
        "SELECT id FROM (SELECT id FROM orders) AS t",
        "SELECT id FROM orders WHERE id IN (SELECT order_id FROM lines)",
        "WITH t AS (SELECT id FROM orders) SELECT COUNT(*) FROM t",  # a common table expression of its own
    ]
    for sql in written:
        assert grammar.fullmatch(sql), sql
    invented = [
        "SELECT COUNT(*) FROM ord",  # a short word is an alias, never a table
        "SELECT COUNT(*) FROM orders AS o JOIN ln ON o.id = ln.order_id",
        "SELECT id FROM orders WHERE id IN (SELECT order_id FROM lns)",
        "SELECT COUNT(*) FROM customers",
        "SELECT 1 FROM orders; DROP TABLE orders",
    ]
    for sql in invented:
        assert not grammar.fullmatch(sql), sql


def test_a_column_may_follow_from_inside_a_function() -> None:
    grammar = as_regex(sql_grammar([("orders", ["ORD_DT"])], "postgres"))
    assert "extract" in function_names("postgres")
    assert grammar.fullmatch("SELECT EXTRACT(YEAR FROM ORD_DT), COUNT(*) FROM orders GROUP BY 1")
    assert grammar.fullmatch("SELECT COUNT(*) FROM orders AS o WHERE CAST(EXTRACT(year FROM o.ORD_DT) AS INT)=2024")
    assert not grammar.fullmatch("SELECT COUNT(*) FROM ORD_DT")  # a column is not a table
