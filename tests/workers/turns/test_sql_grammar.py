"""The grammar of the guided path's SQL call (`workers.sql.sql_grammar`) inside the JSON reply format
(`workers.models.json_replies.call_grammar`): its words are the shown names, keywords and allowed functions."""

from __future__ import annotations

import re

from workers.models.json_replies import call_grammar
from workers.models.types import ToolSpec
from workers.sql.sql_grammar import function_names, sql_grammar


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.split("\n"))


def test_names_are_the_shown_ones_bare_or_quoted_and_every_rule_it_uses_is_defined() -> None:
    grammar = rules(sql_grammar([("orders", ["id", "ship city"]), ("lines", ["order_id"])], "sqlite", rule="argument"))
    names = grammar["argument-name"]
    assert '"orders"' in names
    assert '"order_id"' in names
    assert '"\\\\\\"ship city\\\\\\""' in names  # a name with a space only quoted (a JSON-escaped double quote)
    assert '"ship city"' not in names
    used = {word for body in grammar.values() for word in re.findall(r"argument-[a-z]+", body)}
    assert used <= set(grammar)
    assert grammar["argument"].startswith('("SELECT" | "select" | "WITH" | "with")')


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
