"""Scripted model behaviours for turn tests: each reads the tool results it gets, as a model would."""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.fakes.model_server import Call, Exchange, Say, Step

ORDERS_2024 = "SELECT COUNT(*) FROM ORD_MST WHERE ORD_DT >= '2024-01-01' AND ORD_DT < '2025-01-01'"


def candidates(search_text: str) -> list[tuple[str, str, str]]:
    """(database, table, role) of each candidate line of a search_tables result, in rank order."""
    return re.findall(r"^\d+\. (\w+)\.(\w+) \[([^\]]+)\]", search_text, flags=re.MULTILINE)


def first_value(sql_text: str) -> str:
    """The first cell of the first row of a run_sql result (line 2: line 1 holds the column names)."""
    return sql_text.splitlines()[1].split(" | ")[0]


def search_card_sql_answer(question: str, sql_for: Callable[[str], str], answer: str) -> Callable[[Exchange], Step]:
    """search → open the top candidate's card → SQL on it → an answer carrying the number the SQL returned."""
    chosen: dict[str, str] = {}

    def step(exchange: Exchange) -> Step:
        if exchange.round == 1:
            return Call("search_tables", {"question": question})
        if exchange.round == 2:
            database, table, _role = candidates(exchange.tool_results["search_tables"])[0]
            chosen.update(database=database, table=table)
            return Call("open_table_card", {"database": database, "table": table})
        if exchange.round == 3:
            return Call("run_sql", {"database": chosen["database"], "sql": sql_for(chosen["table"])})
        result = exchange.tool_results["run_sql"]
        if "run_sql" in exchange.tool_errors:
            return Say(f"The SQL failed: {result}")
        return Say(answer.format(value=first_value(result), table=chosen["table"]))

    return step


def search_then_query(question: str, database: str, table: str, sql: str, answer: str) -> Callable[[Exchange], Step]:
    """search → open the card of a named table → SQL → an answer with the number the SQL returned. For tests of the
    chat path, where which table search ranks first is beside the point."""

    def step(exchange: Exchange) -> Step:
        if exchange.round == 1:
            return Call("search_tables", {"question": question})
        if exchange.round == 2:
            return Call("open_table_card", {"database": database, "table": table})
        if exchange.round == 3:
            return Call("run_sql", {"database": database, "sql": sql})
        result = exchange.tool_results["run_sql"]
        if "run_sql" in exchange.tool_errors:
            return Say(f"The SQL failed: {result}")
        return Say(answer.format(value=first_value(result)))

    return step
