"""The guided path's pure steps: which of the candidates stay for the SQL call (`selection.live_first`) and how the
chosen tables' links are written into their `CREATE TABLE` statements (`compact_schema.create_table`)."""

from __future__ import annotations

from typing import Any

from search.candidates import Candidate
from workers.turns.compact_schema import SchemaTable, create_table, named_value_line
from workers.turns.selection import headers_first, leading_tables, live_first, value_holder_kept


def candidate(
    table: str, role: str = "live", score: float = 1.0, values: list[dict[str, str]] | None = None
) -> Candidate:
    matched = ["semantic", "value"] if values else ["semantic"]
    return Candidate("erp", None, table, score, role, None, "", "sqlite", matched, values=values or [])


def test_the_table_holding_a_value_the_question_names_is_offered() -> None:
    """A shipments log leads on "shipped"; the city the question names is a value of the orders table, whose
    filter the answer needs, so that table is offered too, in the leading set and among the tables to pick from."""
    busan = [{"column": "SHIP_CITY", "value": "Busan"}]
    found = [
        candidate("SHIP_HIST", "log", 0.32),
        candidate("ORD_DTL_H", score=0.23),
        candidate("STK_INV", score=0.21),
        candidate("PRD_MST", score=0.17),
        candidate("ORD_MST", score=0.16, values=busan),
    ]
    tables = [table(c.table, ["ID"], ["ID"]) for c in found]
    assert leading_tables(found, tables) == {"SHIP_HIST", "ORD_MST"}
    assert [c.table for c in value_holder_kept(found, 4)] == ["SHIP_HIST", "ORD_DTL_H", "STK_INV", "ORD_MST"]
    # without a value, or with the value in a leading table, nothing changes
    plain = [candidate(c.table, c.role, c.score) for c in found]
    assert leading_tables(plain, tables) == {"SHIP_HIST"}
    assert [c.table for c in value_holder_kept(plain, 4)] == ["SHIP_HIST", "ORD_DTL_H", "STK_INV", "PRD_MST"]
    led = [candidate("ORD_MST", score=0.4, values=busan), *found[:4]]
    assert leading_tables(led, tables) == {"ORD_MST"}


def test_each_part_of_the_question_gets_a_table_among_the_leading_ones() -> None:
    """ "Which product categories had the most returns last year?": the products and the code table of their
    categories lead, and only a lower candidate covers "returns last year"; it joins the leading tables, the
    best covering candidate of that part only, and no candidate covering nothing new does."""
    found = [
        candidate("PRD_MST", score=0.059),
        candidate("CODE_MST", score=0.057),
        candidate("RET_DTL", score=0.044),
        candidate("RET_RSN", score=0.043),
        candidate("STK_INV", score=0.041),
    ]
    found[0].covers = ["product categories"]
    found[2].covers = ["returns last year"]
    found[3].covers = ["returns last year"]
    tables = [table(c.table, ["ID"], ["ID"]) for c in found]
    assert leading_tables(found, tables) == {"PRD_MST", "CODE_MST", "RET_DTL"}
    # a part a leading table covers already brings nothing
    found[1].covers = ["returns last year"]
    assert leading_tables(found, tables) == {"PRD_MST", "CODE_MST"}


def test_a_code_meaning_the_question_names_brings_the_table_coded_by_it() -> None:
    """ "Cancelled" is a meaning in the code table, which leads; the orders table, whose status column takes its codes
    from that table, is offered beside it. A table with no column coded by it is not."""
    cancelled = [{"column": "CODE_NM", "value": "Cancelled"}]
    found = [
        candidate("CODE_DTL", score=0.055, values=cancelled),
        candidate("ORD_DTL_H", score=0.049),
        candidate("ORD_MST", score=0.048),
        candidate("RET_DTL", score=0.041),
        candidate("CODE_MST", score=0.037),
    ]
    coded = {"name": "STATUS_CODE", "type": "TEXT", "codes_from": [[None, "CODE_DTL"]]}
    tables = [table(c.table, ["ID"], ["ID"]) for c in found]
    tables[2] = SchemaTable("ORD_MST", None, {"columns": [{"name": "ORD_NO", "type": "TEXT"}, coded]})
    assert leading_tables(found, tables) == {"CODE_DTL", "ORD_MST"}
    plain = [table(c.table, ["ID"], ["ID"]) for c in found]
    assert leading_tables(found, plain) == {"CODE_DTL"}


def test_a_code_the_question_names_by_its_meaning_is_written_as_the_code_the_rows_hold() -> None:
    orders = SchemaTable("ORD_MST", None, {"columns": []})
    card = {"column": "PAY_MTHD_CD", "value": "01", "meaning": "Credit card"}
    assert named_value_line(orders, card) == "-- the question's 'Credit card' is the code '01' of ORD_MST.PAY_MTHD_CD"
    korean = card | {"said": "신용카드"}
    assert named_value_line(orders, korean) == (
        "-- the question's '신용카드' is the code '01' (Credit card) of ORD_MST.PAY_MTHD_CD"
    )
    products = SchemaTable("PRD_MST", None, {"columns": []})
    assert named_value_line(products, {"column": "CTGRY_CD", "group": "Product category"}) == (
        "-- the question's 'Product category' names what the codes of PRD_MST.CTGRY_CD are"
    )
    city = {"column": "SHIP_CITY", "value": "Busan"}
    assert named_value_line(orders, city) == "-- the question's 'Busan' is a value of ORD_MST.SHIP_CITY"


def test_partitions_and_logs_the_question_does_not_ask_for_are_left_out() -> None:
    found = [candidate("SALES_2023", "partition"), candidate("ORD_MST"), candidate("ORD_CHG_LOG", "log")]
    assert [c.table for c in live_first("What was the total order amount in 2023?", found)] == ["ORD_MST"]
    # a word of the partition's own name (not its period) asks for it; so does history for a log
    asked = live_first("What were total sales in 2023 by the monthly summary?", found)
    assert [c.table for c in asked] == ["SALES_2023", "ORD_MST"]
    history = live_first("Show the history of status changes of orders", found)
    assert [c.table for c in history] == ["ORD_MST", "ORD_CHG_LOG"]
    named = live_first("How many rows does ORD_CHG_LOG hold?", found)
    assert "ORD_CHG_LOG" in [c.table for c in named]
    # a log whose own name word the question says is asked for; a word a live table's name shares is not enough
    shipping = [candidate("SHIP_HIST", "log"), candidate("ORD_MST"), candidate("ORD_CHG_LOG", "log")]
    assert [c.table for c in live_first("How many shipments did the carrier take?", shipping)] == [
        "SHIP_HIST",
        "ORD_MST",
    ]


def test_without_a_live_table_the_parts_stay() -> None:
    parts = [candidate("SALES_2023", "partition"), candidate("SALES_2024", "partition")]
    assert [c.table for c in live_first("What was the total order amount in 2023?", parts)] == [
        "SALES_2023",
        "SALES_2024",
    ]


def table(name: str, columns: list[str], primary: list[str], **card: Any) -> SchemaTable:
    shown = [{"name": c, "type": "TEXT"} for c in columns]
    return SchemaTable(name, None, {"columns": shown, "primary_key": primary, **card})


def test_links_to_chosen_tables_are_references_in_the_referring_table_only() -> None:
    customers = table(
        "CUST_MST",
        ["CUST_ID", "CUST_NM"],
        ["CUST_ID"],
        joins=[{"from_columns": ["CUST_ID"], "to": "ORD_MST", "to_columns": ["CUST_ID"], "kind": "declared"}],
    )
    orders = table(
        "ORD_MST",
        ["ORD_NO", "CUST_ID", "EMP_NO"],
        ["ORD_NO"],
        foreign_keys=[
            {"columns": ["CUST_ID"], "references": "CUST_MST", "ref_columns": ["CUST_ID"]},
            {"columns": ["EMP_NO"], "references": "EMP_MST", "ref_columns": ["EMP_NO"]},  # not chosen
        ],
        joins=[{"from_columns": ["CUST_ID"], "to": "CUST_MST", "to_columns": ["CUST_ID"], "kind": "declared"}],
    )
    lines = [
        table(
            "ORD_DTL",
            ["ORD_NO", "LINE_NO", "QTY"],
            ["ORD_NO", "LINE_NO"],
            joins=[{"from_columns": ["ORD_NO"], "to": "main.ORD_MST", "to_columns": ["ORD_NO"], "kind": "inferred"}],
        )
    ]
    chosen = [customers, orders, *lines]
    assert create_table(orders, chosen) == (
        "CREATE TABLE ORD_MST (\n"
        "  ORD_NO TEXT PRIMARY KEY,\n"
        "  CUST_ID TEXT REFERENCES CUST_MST(CUST_ID),\n"
        "  EMP_NO TEXT\n"
        ");"
    )
    assert "REFERENCES" not in create_table(customers, chosen)  # its key is referred to, it refers to nothing
    detail = create_table(lines[0], chosen)
    assert "ORD_NO TEXT REFERENCES ORD_MST(ORD_NO)" in detail  # a join analysis inferred, written as a reference
    assert "PRIMARY KEY (ORD_NO, LINE_NO)" in detail


def test_a_link_of_several_columns_is_one_foreign_key_line() -> None:
    header = table("INV_HDR", ["INV_NO", "SEQ", "AMT"], ["INV_NO", "SEQ"])
    line = table(
        "INV_LINE",
        ["INV_NO", "SEQ", "LINE", "AMT"],
        ["INV_NO", "SEQ", "LINE"],
        foreign_keys=[{"columns": ["INV_NO", "SEQ"], "references": "INV_HDR", "ref_columns": ["INV_NO", "SEQ"]}],
    )
    assert "  FOREIGN KEY (INV_NO, SEQ) REFERENCES INV_HDR(INV_NO, SEQ)" in create_table(line, [header, line])


def test_a_header_that_ties_with_its_lines_is_shown_first() -> None:
    lines = table(
        "ORD_DTL",
        ["ORD_NO", "LINE_NO", "AMT"],
        ["ORD_NO", "LINE_NO"],
        foreign_keys=[{"columns": ["ORD_NO"], "references": "ORD_MST", "ref_columns": ["ORD_NO"]}],
    )
    header = table("ORD_MST", ["ORD_NO", "TOT_AMT"], ["ORD_NO"])
    other = table("RET_DTL", ["RET_NO", "AMT"], ["RET_NO"])
    near = {"ORD_DTL": 0.0482, "ORD_MST": 0.0475, "RET_DTL": 0.0438}
    assert [t.name for t in headers_first([lines, other, header], near)] == ["ORD_MST", "ORD_DTL", "RET_DTL"]
    far = near | {"ORD_MST": 0.030}  # the lines lead clearly: they stay first
    assert [t.name for t in headers_first([lines, other, header], far)] == ["ORD_DTL", "RET_DTL", "ORD_MST"]
    assert [t.name for t in headers_first([header, lines], near)] == ["ORD_MST", "ORD_DTL"]
    # the question names orders and nothing only the lines' name says: the header first, whatever the scores
    single = "What is the largest single order amount?"
    assert [t.name for t in headers_first([lines, other, header], far, single)] == ["ORD_MST", "ORD_DTL", "RET_DTL"]
    detail = "What is the largest order detail amount?"
    assert [t.name for t in headers_first([lines, other, header], far, detail)] == ["ORD_DTL", "RET_DTL", "ORD_MST"]
    unrelated = "What is the largest amount?"  # names neither table's entity
    assert headers_first([lines, other, header], far, unrelated)[0].name == "ORD_DTL"
