"""The grammar of the guided path's SQL call (`workers.sql.sql_grammar`) inside the JSON reply format
(`workers.models.json_replies.call_grammar`): its words are the shown names, keywords and allowed functions."""

from __future__ import annotations

import re

from tests.gbnf import as_regex, rules
from workers.models.json_replies import call_grammar
from workers.models.types import ToolSpec
from workers.sql.sql_grammar import function_names, sql_grammar


def test_names_are_the_shown_ones_bare_or_quoted_and_every_rule_it_uses_is_defined() -> None:
    text = sql_grammar([("orders", ["id", "ship city"]), ("lines", ["order_id"])], "sqlite", rule="argument")
    grammar = rules(text)
    used = {word for body in grammar.values() for word in re.findall(r"argument-[a-z-]+", body)}
    assert used <= set(grammar)
    assert grammar["argument"].startswith('("SELECT" | "select") (" " argument-part)+')
    written = as_regex(text, "argument")
    assert written.fullmatch("SELECT order_id FROM lines WHERE order_id>1")
    assert written.fullmatch('SELECT \\"ship city\\" FROM orders')  # quoted: a JSON-escaped double quote
    assert not written.fullmatch("SELECT ship city FROM orders")  # a name with a space only quoted
    assert not written.fullmatch("SELECT id FROM order_id")  # a column is not a table
    assert not written.fullmatch("SELECT ordr_id FROM lines")  # nor a word of its own


def test_mysql_names_may_take_backticks_and_functions_follow_the_guard() -> None:
    written = as_regex(sql_grammar([("orders", ["ship city"])], "mysql"))
    assert written.fullmatch("SELECT `ship city` FROM `orders`")
    assert "strftime" in function_names("sqlite")
    assert "strftime" not in function_names("postgres")
    assert "sleep" not in function_names("mysql")
    assert not written.fullmatch("SELECT sleep(5) FROM orders")


def test_words_sharing_a_prefix_write_it_once_and_keep_every_word() -> None:
    """llama.cpp checks the vocabulary against one parse stack per alternative that may come next: a word list
    written as a prefix tree starts one stack per first character, however many names share it."""
    columns = ["ORD", "ORD_NO", "ORD_DT", "ORD_AMT", "ORD_ST_CD", "ORDER_KIND"]
    text = sql_grammar([("ORD_MST", columns)], "sqlite")
    words = rules(text)["sql-words"]
    assert words.count('"ORD') == 1
    written = as_regex(text)
    for column in columns:
        assert written.fullmatch(f"SELECT {column} FROM ORD_MST"), column
    for invented in ("OR_NO", "ORD_", "ORD_D", "ORDER_KINDS"):
        assert not written.fullmatch(f"SELECT {invented} FROM ORD_MST"), invented


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


def test_after_a_qualifiers_dot_only_a_shown_column_or_a_star() -> None:
    grammar = as_regex(sql_grammar([("PRD_MST", ["CTGRY_CD"]), ("CODE_MST", ["CODE_GRP", "GRP_NM"])], "sqlite"))
    for sql in (
        "SELECT T2.GRP_NM, COUNT(*) FROM PRD_MST AS T1 JOIN CODE_MST AS T2 ON T1.CTGRY_CD=T2.CODE_GRP GROUP BY 1",
        "SELECT PRD_MST.CTGRY_CD, T1.* FROM PRD_MST T1",
        "SELECT COUNT(*) FROM PRD_MST WHERE CTGRY_CD>0.5",  # a number's dot
    ):
        assert grammar.fullmatch(sql), sql
    for sql in (
        "SELECT T2.grp nm FROM CODE_MST AS T2",  # sampled fragments of GRP_NM
        "SELECT b.cus FROM CODE_MST b",
        "SELECT T1.CTGRY_CD.GRP_NM FROM PRD_MST T1",
    ):
        assert not grammar.fullmatch(sql), sql
