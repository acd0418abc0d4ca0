"""The sentence an answer written from its rows starts with (`workers.turns.sentences`): the question's own words
and the result's cells as every surface formats them."""

from __future__ import annotations

from typing import Any

import pytest

from core.answer.model import ResultTable
from core.answer.values import ValueKind as K
from core.answer.values import column_header
from workers.tools.base import SqlRecord
from workers.turns.answers import user_error
from workers.turns.guided_answers import no_rows
from workers.turns.result_codes import result_meanings
from workers.turns.sentences import answer_sentence


def one(question: str, value: Any, kind: K, column: str = "value") -> str:
    return answer_sentence(question, ResultTable(columns=[column], kinds=[kind], rows=[[value]]))


@pytest.mark.parametrize(
    ("question", "value", "kind", "sentence"),
    [
        ("How many orders were placed in 2024?", 4750, K.COUNT, "4,750 orders were placed in 2024."),
        ("How many orders shipped to Busan in 2024?", 351, K.COUNT, "351 orders shipped to Busan in 2024."),
        ("How many customers are there?", 1200, K.COUNT, "There are 1,200 customers."),
        ("How much revenue did we make in 2024?", 1234567.5, K.AMOUNT, "Revenue in 2024: 1,234,567.50."),
        (
            "What was the total order amount in 2023?",
            3691987750.5,
            K.AMOUNT,
            "The total order amount in 2023 was 3,691,987,750.50.",
        ),
        ("What is our average order value?", 512.3333, K.NUMBER, "The average order value is 512.33."),
        ("Which customer placed the most orders?", "Busan Trading", K.TEXT, "Busan Trading placed the most orders."),
        (
            "What is the name of the largest warehouse?",
            "Busan DC",
            K.TEXT,
            "The name of the largest warehouse is Busan DC.",
        ),
        ("Show the number of employees", 57, K.COUNT, "Number of employees: 57."),
        ("2024년 부산으로 배송된 주문은 몇 건인가요?", 351, K.COUNT, "2024년 부산으로 배송된 주문은 351건입니다."),
        ("2023년 총 매출은 얼마인가요?", 1234567.5, K.AMOUNT, "2023년 총 매출은 1,234,567.50입니다."),
        ("What year had the most orders?", 2024, K.YEAR, "2024 had the most orders."),
        ("How many orders did customer C000551 place?", 10, K.COUNT, "Customer C000551 placed 10 orders."),
        ("How many shipments did CJ Logistics carry?", 7800, K.COUNT, "CJ Logistics carried 7,800 shipments."),
        ("How many returns did customers file last year?", 87, K.COUNT, "Customers filed 87 returns last year."),
        ("How many products does the catalog have?", 300, K.COUNT, "The catalog has 300 products."),
        ("Which warehouses hold stock of P0001?", "W01", K.TEXT, "W01 holds stock of P0001."),
        ("Which customers have an open invoice?", "Bukhan Foods", K.TEXT, "Bukhan Foods has an open invoice."),
    ],
)
def test_one_value_is_said_in_the_questions_words(question: str, value: Any, kind: K, sentence: str) -> None:
    assert one(question, value, kind) == sentence


def test_a_series_over_time_names_its_subject_and_its_highest_point() -> None:
    table = ResultTable(
        columns=["month", "total"],
        kinds=[K.DATE, K.AMOUNT],
        rows=[["2024-01-01", 100.5], ["2024-03-01", 312450], ["2024-02-01", 200]],
    )
    assert answer_sentence("What was our total sales amount by month in 2024?", table) == (
        "Total sales amount by month in 2024, highest in 2024-03-01: 312,450.00."
    )


def test_a_breakdown_by_category_names_the_top_category() -> None:
    table = ResultTable(columns=["CITY", "n"], kinds=[K.TEXT, K.COUNT], rows=[["Busan", 351], ["Seoul", 512]])
    assert answer_sentence("Orders by city", table) == "Orders by city, highest for Seoul: 512."
    assert answer_sentence("도시별 주문 수는?", table) == "도시별 주문 수: 2개 행, 가장 높은 값은 Seoul의 512입니다."


def test_a_list_without_a_measure_says_how_many_rows_it_holds() -> None:
    table = ResultTable(columns=["CUST_NM"], kinds=[K.TEXT], rows=[["a"], ["b"], ["c"]], truncated=True)
    assert answer_sentence("List our customers in Busan", table) == "Customers in Busan: 3+ rows, listed below."


def test_one_row_of_several_values_names_each_by_its_header() -> None:
    table = ResultTable(columns=["CUST_NM", "COUNT(*)"], kinds=[K.TEXT, K.COUNT], rows=[["Busan Trading", 4750]])
    assert answer_sentence("Who is our biggest customer?", table) == (
        "Biggest customer \u2014 CUST_NM: Busan Trading; count: 4,750."
    )


def test_which_with_a_name_and_its_code_says_both() -> None:
    table = ResultTable(columns=["CODE_NM", "CTGRY_CD"], kinds=[K.TEXT, K.CODE], rows=[["Electronics", "B20"]])
    assert answer_sentence("Which product category has the most products?", table) == (
        "Electronics (B20) has the most products."
    )


def test_a_count_asked_first_leads_and_the_other_values_follow() -> None:
    table = ResultTable(columns=["COUNT(*)", "SUM(RET_AMT)"], kinds=[K.COUNT, K.AMOUNT], rows=[[1107, -151759330]])
    assert answer_sentence("How many order lines were returned, and for what total amount?", table) == (
        "1,107 order lines were returned; total RET_AMT: -151,759,330.00."
    )


def test_unnamed_aggregates_get_headers_in_words() -> None:
    assert [column_header(c) for c in ("COUNT(*)", "SUM(o.TOT_AMT)", "count(DISTINCT CUST_NO)", "avg(x)", "n")] == [
        "count",
        "total TOT_AMT",
        "count of distinct CUST_NO",
        "average x",
        "n",
    ]


def test_no_rows_no_sentence() -> None:
    assert answer_sentence("How many?", ResultTable(columns=["n"], rows=[])) == ""


@pytest.mark.parametrize(
    ("tool_text", "shown"),
    [
        (
            "error: cannot reach database billing right now; tell the user that this database is not answering",
            "The query could not run: cannot reach database billing right now.",
        ),
        (
            "error: no such column: T2.WH_CD\nColumns of WH_MST: WH_CD, WH_NM",
            "The query could not run: a column it named does not exist.",
        ),
        (
            "no permission: erp.EMP_MST exists but this user may not see it; tell the user the data exists",
            "no permission: this query reads data you may not see.",
        ),
        ("timeout: the query ran longer than 30 s", "The query took too long (the query ran longer than 30 s)."),
    ],
)
def test_a_failed_statement_reads_as_one_plain_sentence(tool_text: str, shown: str) -> None:
    assert user_error(tool_text) == shown


def test_which_with_a_name_and_its_count_says_the_count_by_its_header() -> None:
    table = ResultTable(columns=["CUST_NM", "num_orders"], kinds=[K.TEXT, K.COUNT], rows=[["Bukhan Foods Corp.", 163]])
    assert answer_sentence("Which customer placed the most orders?", table) == (
        "Bukhan Foods Corp. placed the most orders (num_orders: 163)."
    )


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        ("How many orders were cancelled?", "1 order was cancelled."),
        (
            "How many warehouse stock entries are below their safety stock?",
            "1 warehouse stock entry is below their safety stock.",
        ),
        ("How many orders have more than five order lines?", "1 order has more than five order lines."),
        ("How many different customers placed an order in 2024?", "1 different customer placed an order in 2024."),
        ("How many VIP customers are there?", "There is 1 VIP customer."),
        ("How many orders did customer C000551 place?", "Customer C000551 placed 1 order."),
        ("How many boxes were shipped?", "1 box was shipped."),
    ],
)
def test_a_count_of_one_agrees_with_its_noun(question: str, sentence: str) -> None:
    assert one(question, 1, K.COUNT) == sentence


def test_a_breakdown_of_one_group_is_said_as_a_breakdown() -> None:
    table = ResultTable(columns=["month", "total_sales"], kinds=[K.TEXT, K.AMOUNT], rows=[["2024-03", 2043611540]])
    assert answer_sentence("What was our total sales amount by month in 2024?", table) == (
        "Total sales amount by month in 2024: one row, 2024-03: 2,043,611,540.00."
    )
    assert (
        answer_sentence("2024년 월별 매출 합계는?", table)
        == "2024년 월별 매출 합계: 1개 행, 2024-03의 2,043,611,540.00입니다."
    )


def test_a_list_returned_for_one_count_says_what_it_holds() -> None:
    table = ResultTable(
        columns=["Order Lines Returned", "Total Amount"],
        kinds=[K.COUNT, K.AMOUNT],
        rows=[[1, -200], [6, -300]],
        truncated=True,
    )
    assert answer_sentence("How many order lines were returned, and for what total amount?", table) == (
        "The query returned 2+ rows for this question, listed below."
    )
    per_city = ResultTable(columns=["CITY", "n"], kinds=[K.TEXT, K.COUNT], rows=[["Busan", 351], ["Seoul", 512]])
    assert answer_sentence("How many orders per city?", per_city) == "Orders per city, highest for Seoul: 512."
    # a label and a measure are a breakdown, also where the question's wording of it is not recognised
    assert answer_sentence("How many orders went to each city?", per_city) == (
        "Orders went to each city, highest for Seoul: 512."
    )


CATEGORY_CARD = {
    "table": "PRD_MST",
    "columns": [
        {"name": "PRD_CD", "codes": []},
        {
            "name": "CTGRY_CD",
            "codes": [{"code": "B20", "meaning": "Electronics"}, {"code": "A10", "meaning": "Office Supplies"}],
        },
    ],
}


def test_a_code_in_the_answer_is_said_with_its_meaning_from_the_card() -> None:
    sql = "SELECT p.CTGRY_CD, COUNT(*) AS n FROM PRD_MST AS p GROUP BY p.CTGRY_CD ORDER BY n DESC LIMIT 1"
    meanings = result_meanings(sql, "sqlite", {"PRD_MST": CATEGORY_CARD})
    assert meanings == {0: {"B20": "Electronics", "A10": "Office Supplies"}}
    table = ResultTable(columns=["CTGRY_CD", "n"], kinds=[K.CODE, K.COUNT], rows=[["B20", 66]])
    question = "Which product category has the most products?"
    assert answer_sentence(question, table) == "B20 has the most products (n: 66)."
    assert answer_sentence(question, table, meanings) == "B20 (Electronics) has the most products (n: 66)."
    # the statement that joined the code's name in says it once; the code twice is said once
    named = ResultTable(columns=["CTGRY_CD", "CODE_NM"], kinds=[K.CODE, K.TEXT], rows=[["B20", "Electronics"]])
    assert answer_sentence(question, named, meanings) == "B20 (Electronics) has the most products."
    twice = ResultTable(columns=["CTGRY_CD", "CTGRY_CD"], kinds=[K.CODE, K.CODE], rows=[["B20", "B20"]])
    assert answer_sentence(question, twice) == "B20 has the most products."


def test_only_plain_columns_of_the_tables_read_give_code_meanings() -> None:
    cards = {"PRD_MST": CATEGORY_CARD}
    assert result_meanings("SELECT LOWER(CTGRY_CD) FROM PRD_MST", "sqlite", cards) == {}
    assert result_meanings("SELECT PRD_CD, CTGRY_CD FROM PRD_MST", "sqlite", cards) == {1: CATEGORY_MEANINGS}
    assert result_meanings("SELECT x.CTGRY_CD FROM (SELECT CTGRY_CD FROM PRD_MST) AS x", "sqlite", cards) == {}
    assert result_meanings("SELECT CTGRY_CD FROM OTHER", "sqlite", cards) == {}
    assert result_meanings("SELECT FROM WHERE", "sqlite", cards) == {}


CATEGORY_MEANINGS = {"B20": "Electronics", "A10": "Office Supplies"}


@pytest.mark.parametrize(
    ("sql", "today"),
    [
        ("SELECT COUNT(*) FROM RET_DTL WHERE RET_DT >= DATE('now', '-1 year')", True),
        ("SELECT COUNT(*) FROM RET_DTL WHERE RET_DT >= CURRENT_DATE - INTERVAL '1' YEAR", True),
        ("SELECT COUNT(*) FROM RET_DTL WHERE RET_DT >= DATE_SUB(NOW(), INTERVAL 1 YEAR)", True),
        ("SELECT COUNT(*) FROM RET_DTL WHERE RET_DT >= '2023-01-01'", False),
        ("SELECT COUNT(*) FROM ORD_MST WHERE NOTE = 'nowhere'", False),
    ],
)
def test_no_rows_counted_back_from_today_asks_for_the_period(sql: str, today: bool) -> None:
    record = SqlRecord(database="erp", sql=sql, columns=["n"], rows=[], truncated=False, error=None)
    text = no_rows(["erp.RET_DTL"], record)
    assert text.startswith("The query on erp.RET_DTL found no matching rows")
    assert ("counted back from today's date" in text) is today
