"""The rewrites a guided statement gets before it runs, in order (`workers.turns.statement_fixes`)."""

from __future__ import annotations

from typing import Any

from workers.turns.compact_schema import SchemaTable
from workers.turns.selection import Selection
from workers.turns.statement_fixes import fixed_statement


def _card(name: str, columns: list[str], key: list[str]) -> dict[str, Any]:
    return {"table": name, "columns": [{"name": c} for c in columns], "primary_key": key}


SELECTION = Selection(
    database="docs",
    engine="sqlite",
    tables=[
        SchemaTable("Ref_Template_Types", None, _card("Ref_Template_Types", ["Code", "Description"], ["Code"])),
        SchemaTable("Templates", None, _card("Templates", ["Template_ID", "Code", "Details"], ["Template_ID"])),
    ],
)
QUESTION = "What is the description of the template type with the code AD?"


def test_a_join_is_left_out_once_a_column_written_with_its_alias_moves_to_the_table_that_has_it() -> None:
    written = (
        "SELECT T2.Description FROM Ref_Template_Types AS T1 JOIN Templates AS T2 ON T1.Code = T2.Code "
        "WHERE T1.Code = 'AD'"
    )
    trace: dict[str, Any] = {}
    fixed = fixed_statement(written, QUESTION, SELECTION, trace)
    assert fixed == "SELECT T1.Description FROM Ref_Template_Types AS T1 WHERE T1.Code = 'AD'"
    assert trace["requalified"] == written
    assert trace["pruned"] == trace["requalified"].replace("T2.Description", "T1.Description")


def test_a_join_whose_table_the_statement_reads_is_kept() -> None:
    written = (
        "SELECT T1.Description, T2.Details FROM Ref_Template_Types AS T1 JOIN Templates AS T2 ON T1.Code = T2.Code "
        "WHERE T1.Code = 'AD'"
    )
    trace: dict[str, Any] = {}
    assert fixed_statement(written, QUESTION, SELECTION, trace) == written
    assert trace == {}
