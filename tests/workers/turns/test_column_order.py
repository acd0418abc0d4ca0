"""A wide result keeps the question's columns first (`workers.turns.column_order`), rows and kinds with them."""

from __future__ import annotations

from core.answer.model import ResultTable
from core.answer.values import ValueKind as K
from workers.turns.column_order import WIDE, question_columns_first

COLUMNS = ["ORD_NO", "CUST_NO", "ORD_DT", "STATUS_CODE", "REG_USER", "REG_DT", "SHIP_CITY", "TOT_AMT"]
KINDS = [K.IDENTIFIER, K.IDENTIFIER, K.DATE, K.CODE, K.TEXT, K.DATE, K.TEXT, K.AMOUNT]
ROW = [101, "C1", "2024-01-02", "30", "batch", "2024-01-02", "Busan", 1250.5]


def wide() -> ResultTable:
    return ResultTable(database="erp", sql="SELECT * FROM ORD_MST", columns=COLUMNS, kinds=KINDS, rows=[ROW, ROW])


def test_the_columns_the_question_names_come_first_in_its_order() -> None:
    shown = question_columns_first(wide(), "Which cities were orders shipped to, and for what total amounts?")
    # "cities" names SHIP_CITY, "orders" the ORD_ columns (in the statement's order), "total" TOT_AMT
    assert shown.columns[:4] == ["SHIP_CITY", "ORD_NO", "ORD_DT", "TOT_AMT"]
    # every column is still there, and each row and kind moved with its column
    assert sorted(shown.columns) == sorted(COLUMNS)
    for row in shown.rows:
        assert {c: v for c, v in zip(shown.columns, row, strict=True)} == dict(zip(COLUMNS, ROW, strict=True))
    assert {c: k for c, k in zip(shown.columns, shown.kinds, strict=True)} == dict(zip(COLUMNS, KINDS, strict=True))
    assert shown.sql == "SELECT * FROM ORD_MST"


def test_the_others_keep_the_statements_order() -> None:
    shown = question_columns_first(wide(), "Show the ship city of each order")
    assert shown.columns[0] == "SHIP_CITY"
    rest = [c for c in shown.columns if c not in ("SHIP_CITY", "ORD_NO", "ORD_DT")]
    assert rest == [c for c in COLUMNS if c in rest]


def test_a_narrow_result_or_one_the_question_does_not_name_is_left_as_it_ran() -> None:
    narrow = ResultTable(columns=COLUMNS[:WIDE], kinds=KINDS[:WIDE], rows=[ROW[:WIDE]])
    assert question_columns_first(narrow, "ship city") is narrow
    table = wide()
    assert question_columns_first(table, "What is in there?") is table


def test_short_name_parts_match_no_question_word() -> None:
    table = ResultTable(columns=[f"C{i}_NO" for i in range(WIDE)] + ["TO_DT", "ID"], rows=[list(range(WIDE + 2))])
    assert question_columns_first(table, "How many went to id no?") is table
