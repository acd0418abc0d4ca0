"""The checks of a statement against its question (`workers.turns.answer_checks`) and the linking of a literal to
the value a column holds (`workers.turns.value_linking`), on cards written the way analysis writes them. The probes
answer from a dictionary of what each column holds, as the SQL probe would on such data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from workers.tools.base import SqlRecord
from workers.turns.answer_checks import Probes, Verdict, check
from workers.turns.guided_checks import rewrite
from workers.turns.question_shape import asked_breakdown, asked_one_figure, asked_top
from workers.turns.value_linking import LinkedValue, held_match, korean_words

HELD = {
    ("ORDERS", "CITY"): ["Seoul", "Busan", "Incheon"],
    ("SHIPMENTS", "CARRIER"): ["CJ", "KP"],
    ("ORDERS", "PAYMENT"): ["01", "04"],
    ("MONTHLY", "SALES_YM"): ["202401", "202402"],
    ("ORDERS", "ORDER_ID"): ["C000551", "C000552"],
    ("MONTHLY", "BOOKED"): ["2024-01-31", "2024-02-29"],
}
CARDS: dict[str, dict[str, Any]] = {
    "ORDERS": {
        "role": "live",
        "columns": [
            {"name": "ORDER_ID", "key": "primary"},
            {"name": "ORDER_DATE"},
            {"name": "AMOUNT"},
            {"name": "CITY", "values": ["Seoul", "Busan"]},  # a profiling sample: not every value
            {"name": "STATUS", "codes": [{"code": "30", "meaning": "Shipped"}, {"code": "40", "meaning": "Delivered"}]},
            {"name": "SHIP_CITY"},
            {
                "name": "PAYMENT",
                "codes": [{"code": "01", "meaning": "Credit Card"}, {"code": "04", "meaning": "Mobile Payment"}],
            },
        ],
    },
    "SHIPMENTS": {
        "role": "log",
        "columns": [
            {"name": "ORDER_ID"},
            {
                "name": "CARRIER",
                "codes": [{"code": "CJ", "meaning": "CJ Logistics"}, {"code": "KP", "meaning": "Korea Post"}],
            },
        ],
    },
    "ORDERS_2023_12": {
        "role": "snapshot",
        "copy_of": "ORDERS",
        "columns": [{"name": "ORDER_DATE"}, {"name": "AMOUNT"}],
    },
    "ORDERS_BAK": {"role": "backup", "copy_of": "ORDERS", "columns": [{"name": "AMOUNT"}]},
    "MONTHLY": {
        "role": "live",
        "columns": [
            {"name": "SALES_YM", "type": "CHAR(6)"},  # no values in the card: the probe reads some
            {"name": "BOOKED", "type": "VARCHAR(10)"},  # text, but written as dates
            {"name": "CLOSED_AT", "type": "TIMESTAMP", "values": ["1706659200"]},
            {"name": "AMT"},
        ],
    },
}
CITY_BUSAN = [LinkedValue("ORDERS", "CITY", "Busan")]


def held(table: str, column: str, literals: Sequence[str]) -> set[str]:
    return {v for v in literals if v in HELD.get((table, column), [])}


PROBES = Probes(held=held, sample=lambda table, column: HELD.get((table, column)))


def verdict(question: str, sql: str, rows: list[list[Any]], linked: Sequence[LinkedValue] = ()) -> Verdict:
    record = SqlRecord("shop", sql, ["value"], rows, False, None)
    return check(question, record, "sqlite", CARDS, linked, PROBES)


def kinds(found: Verdict) -> list[str]:
    return [d.kind for d in found.doubts]


def test_a_code_the_question_does_not_name_is_a_doubt_that_points_at_the_column_holding_its_value() -> None:
    found = verdict(
        "How many orders shipped to Busan in 2024?",
        "SELECT COUNT(*) FROM SHIPMENTS WHERE CARRIER = 'KP'",
        [[549]],
        CITY_BUSAN,
    )
    [doubt] = found.doubts
    assert doubt.kind == "code"
    assert doubt.say == (
        "I filtered on CARRIER = 'KP' (Korea Post), which the question does not name; say if you meant 'Busan' as "
        "ORDERS.CITY."
    )
    assert doubt.table == "ORDERS"  # the repair's schema gains the table that holds the question's value
    assert "filter on it" in doubt.hint


def test_a_code_is_rewritten_to_the_one_whose_meaning_the_question_names() -> None:
    sql = "SELECT COUNT(*) FROM ORDERS WHERE PAYMENT = '01' AND ORDER_DATE >= '2024-01-01'"
    found = verdict("How many orders in 2024 were paid with mobile pay?", sql, [[5]])
    assert kinds(found) == []
    assert [(r.literal, r.value) for r in found.rewrites] == [("01", "04")]
    assert rewrite(sql, "sqlite", found.rewrites) == (
        "SELECT COUNT(*) FROM ORDERS WHERE PAYMENT = '04' AND ORDER_DATE >= '2024-01-01'"
    )
    assert verdict("How many orders were paid by credit card?", sql, [[5]]).rewrites == []  # named: nothing to do
    # a meaning written where the code belongs is rewritten to its code
    meaning = verdict("How many orders were paid by credit card?", sql.replace("'01'", "'Credit Card'"), [])
    assert [(r.literal, r.value) for r in meaning.rewrites] == [("Credit Card", "01")]


def test_a_code_read_from_a_word_another_filter_answers_for_is_a_doubt() -> None:
    both = "SELECT COUNT(*) FROM ORDERS WHERE SHIP_CITY = 'Busan' AND STATUS = '30'"
    [doubt] = verdict("How many orders were shipped to Busan?", both, [[4]]).doubts
    assert (
        doubt.say
        == "I read 'shipped' both as SHIP_CITY and as STATUS = '30' (Shipped); say if you did not mean the second."
    )
    assert "leave out STATUS = '30'" in doubt.hint
    delivered = "SELECT COUNT(*) FROM ORDERS WHERE SHIP_CITY = 'Busan' AND STATUS = '40'"
    assert kinds(verdict("How many orders shipped to Busan were delivered?", delivered, [[4]])) == []


def test_a_status_read_from_the_verb_a_payment_filter_answers_for_is_a_doubt() -> None:
    """ "paid by credit card": the payment method's filter answers for "paid" (pay), so a status Paid read from the
    same word is doubted; a question about paid orders alone is not."""
    cards = {"ORDERS": {**CARDS["ORDERS"], "columns": [dict(c) for c in CARDS["ORDERS"]["columns"]]}}
    status = next(c for c in cards["ORDERS"]["columns"] if c["name"] == "STATUS")
    status["codes"] = [*status["codes"], {"code": "20", "meaning": "Paid"}]

    def doubts(question: str, sql: str) -> list[str]:
        record = SqlRecord("shop", sql, ["value"], [[12]], False, None)
        return [d.say for d in check(question, record, "sqlite", cards, (), PROBES).doubts]

    both = "SELECT COUNT(*) FROM ORDERS WHERE PAYMENT = '01' AND STATUS = '20'"
    assert doubts("How many orders were paid by credit card?", both) == [
        "I read 'paid' both as PAYMENT and as STATUS = '20' (Paid); say if you did not mean the second."
    ]
    assert doubts("How many orders were paid?", "SELECT COUNT(*) FROM ORDERS WHERE STATUS = '20'") == []


def test_a_filter_whose_only_doubt_is_that_nobody_asked_for_it_is_offered_without_it() -> None:
    both = "SELECT COUNT(*) FROM ORDERS WHERE SHIP_CITY = 'Busan' AND STATUS = '30'"
    left_out = verdict("How many orders were shipped to Busan?", both, [[4]]).unfiltered
    assert left_out is not None
    assert left_out.sql == "SELECT COUNT(*) FROM ORDERS WHERE SHIP_CITY = 'Busan'"
    assert left_out.note == "I left out the filter STATUS = '30', which the question does not ask for."
    # codes the question does not name at all, every literal of an IN, inside parentheses; an identifier
    statuses = "SELECT SUM(AMOUNT) FROM ORDERS WHERE (STATUS IN ('30', '40')) AND ORDER_ID = 'C000551'"
    found = verdict("What was the revenue?", statuses, [[7]])
    assert kinds(found) == ["code", "code", "value"]
    assert found.unfiltered is not None
    assert found.unfiltered.sql == "SELECT SUM(AMOUNT) FROM ORDERS"
    # not a filter the question's own value should replace, nor one under an OR or in a join's condition
    assert (
        verdict(
            "How many orders shipped to Busan in 2024?",
            "SELECT COUNT(*) FROM SHIPMENTS WHERE CARRIER = 'KP'",
            [[549]],
            CITY_BUSAN,
        ).unfiltered
        is None
    )
    for kept in (
        "SELECT SUM(AMOUNT) FROM ORDERS WHERE STATUS = '30' OR AMOUNT > 5",
        "SELECT SUM(O.AMOUNT) FROM ORDERS AS O JOIN SHIPMENTS AS S ON S.ORDER_ID = O.ORDER_ID AND O.STATUS = '30'",
    ):
        found = verdict("What was the revenue?", kept, [[7]])
        assert kinds(found) == ["code"], kept
        assert found.unfiltered is None, kept


def test_a_breakdown_or_a_top_n_the_question_asks_for_must_be_in_the_result() -> None:
    total = "SELECT SUM(AMOUNT) FROM ORDERS WHERE ORDER_DATE LIKE '2024%'"
    assert kinds(verdict("What was our total sales amount by month in 2024?", total, [[10]])) == ["shape"]
    monthly = "SELECT substr(ORDER_DATE, 1, 7), SUM(AMOUNT) FROM ORDERS GROUP BY 1"
    assert kinds(verdict("What was our total sales amount by month in 2024?", monthly, [["2024-01", 4]])) == []
    assert kinds(verdict("How many orders per city?", "SELECT COUNT(*) FROM ORDERS", [[3]])) == ["shape"]
    one = "SELECT CITY FROM ORDERS GROUP BY CITY ORDER BY SUM(AMOUNT) DESC LIMIT 1"
    assert kinds(verdict("Which five cities spent the most?", one, [["Seoul"]])) == ["shape"]
    five = one.replace("LIMIT 1", "LIMIT 5")
    assert kinds(verdict("Which five cities spent the most?", five, [["Seoul"], ["Busan"]])) == []
    # "by" that is not a breakdown, and a plain count, ask for none
    assert kinds(verdict("How many orders were paid by credit card?", "SELECT COUNT(*) FROM ORDERS", [[3]])) == []


def test_an_average_the_question_asks_for_must_be_computed() -> None:
    question = "What is the total population of each government form with an average life expectancy above 72?"
    per_row = "SELECT FORM, SUM(POPULATION) FROM COUNTRY WHERE LIFE_EXPECTANCY > 72 GROUP BY FORM"
    assert kinds(verdict(question, per_row, [["Republic", 10]])) == ["shape"]
    grouped = "SELECT FORM, SUM(POPULATION) FROM COUNTRY GROUP BY FORM HAVING AVG(LIFE_EXPECTANCY) > 72"
    assert kinds(verdict(question, grouped, [["Republic", 10]])) == []
    # a ratio written out, and a column that stores the average, compute one too
    ratio = "SELECT SUM(AMOUNT) * 1.0 / COUNT(*) FROM ORDERS"
    assert kinds(verdict("What is the average order amount?", ratio, [[4.5]])) == []
    stored = "SELECT MAX(CAPACITY), AVERAGE FROM STADIUM"
    assert kinds(verdict("What is the maximum capacity and the average of all stadiums?", stored, [[9, 3]])) == []
    assert kinds(verdict("주문 금액의 평균은?", "SELECT AMOUNT FROM ORDERS LIMIT 1", [[3]])) == ["shape"]


@pytest.mark.parametrize(
    ("question", "breakdown", "top"),
    [
        ("What was our total sales amount by month in 2024?", "time", None),
        ("What is the average weight of cars each year?", "time", None),
        ("How many students are there for each department?", "group", None),
        ("지역별 매출 합계는?", "group", None),
        ("월별 주문 건수", "time", None),
        ("Show the top 3 products by sales", "", 3),
        ("Which five customers spent the most in 2023?", "", 5),
        ("What are the names of the three oldest singers?", "", 3),
        ("상위 10 고객", "", 10),
        ("What are the package options of all tv channels directed by Ben Jones?", "", None),
        ("Which template type code is used by most number of documents?", "", None),
    ],
)
def test_what_a_question_asks_of_the_result_shape(question: str, breakdown: str, top: int | None) -> None:
    assert asked_breakdown(question) == breakdown
    assert asked_top(question) == top


def test_one_figure_asked_and_one_row_per_group_returned_is_a_doubt() -> None:
    per_order = "SELECT COUNT(*) FROM ORDERS GROUP BY ORDER_ID HAVING COUNT(*) > 5"
    found = verdict("How many orders have more than five lines?", per_order, [[6], [7], [9]])
    assert kinds(found) == ["shape"]
    assert "one figure" in found.doubts[0].say
    assert "outer SELECT" in found.doubts[0].hint
    counted = f"SELECT COUNT(*) FROM ({per_order})"
    assert kinds(verdict("How many orders have more than five lines?", counted, [[3]])) == []
    # a group of one row, and questions asking for a figure per group or a list, are no doubt
    assert kinds(verdict("What was the total amount?", "SELECT SUM(AMOUNT) FROM ORDERS GROUP BY 1", [[4]])) == []
    per_city = "SELECT CITY, COUNT(*) FROM ORDERS GROUP BY CITY"
    assert kinds(verdict("How many orders did each city place?", per_city, [["Seoul", 2], ["Busan", 1]])) == []
    assert kinds(verdict("How many orders were placed by city?", per_city, [["Seoul", 2], ["Busan", 1]])) == []


def test_a_grouping_of_aggregates_alone_is_offered_without_its_group_by_for_one_figure() -> None:
    by_month = "SELECT SUM(AMT) AS total FROM MONTHLY GROUP BY SUBSTR(SALES_YM, 1, 6) ORDER BY total"
    asked = "What was the total sales amount in 2023?"
    assert verdict(asked, by_month, [[1], [2]]).ungrouped == "SELECT SUM(AMT) AS total FROM MONTHLY"
    # not where the grouping decides what is counted, nor where the result names the groups or is one row
    for kept in (
        "SELECT COUNT(*) FROM ORDERS GROUP BY ORDER_ID HAVING COUNT(*) > 5",
        "SELECT CITY, SUM(AMOUNT) FROM ORDERS GROUP BY CITY",
        "SELECT SUM(AMOUNT) + CITY FROM ORDERS GROUP BY CITY",
        "SELECT SUM(AMOUNT) FROM ORDERS GROUP BY CITY ORDER BY 1 DESC LIMIT 1",
        "SELECT SUM(AMOUNT) FROM ORDERS GROUP BY CITY UNION SELECT 1",
    ):
        assert verdict(asked, kept, [[1], [2]]).ungrouped is None, kept
    assert verdict(asked, by_month, [[1]]).ungrouped is None
    assert verdict("What was the total by month?", by_month, [[1], [2]]).ungrouped is None


def test_rows_of_aggregates_with_nothing_to_tell_them_apart_are_one_figure_unless_groups_are_asked_for() -> None:
    per_order = "SELECT SUM(AMOUNT) AS revenue FROM ORDERS GROUP BY ORDER_ID"
    assert verdict("show me revenue", per_order, [[3], [5]]).ungrouped == "SELECT SUM(AMOUNT) AS revenue FROM ORDERS"
    for asked in (
        "How many orders did each customer place?",
        "Show the revenue of the three biggest orders",
        "revenue per city",
        "Show me revenue by month",
    ):
        assert verdict(asked, per_order, [[3], [5]]).ungrouped is None, asked


@pytest.mark.parametrize(
    ("question", "one"),
    [
        ("How many orders were cancelled?", True),
        ("What was the average order amount in 2024?", True),
        ("Count the number of countries for which Spanish is spoken.", True),
        ("How many students are there for each department?", False),
        ("How many different templates are used?", False),
        ("Which customer placed the most orders?", False),
        ("What are the names of the singers?", False),
    ],
)
def test_which_questions_ask_for_one_figure(question: str, one: bool) -> None:
    assert asked_one_figure(question) is one


def test_one_day_for_a_period_the_question_names_is_a_doubt() -> None:
    day = "SELECT COUNT(*) FROM ORDERS WHERE ORDER_DATE = '2023-12-01'"
    assert kinds(verdict("How many orders were placed in December 2023?", day, [[34]])) == ["date"]
    assert kinds(verdict("How many orders were placed on December 1, 2023?", day, [[34]])) == []
    assert kinds(verdict("How many orders were placed on 2023-12-01?", day, [[34]])) == []


def test_a_date_function_on_a_column_that_holds_no_dates_is_a_doubt() -> None:
    by_month = "SELECT strftime('%Y-%m', SALES_YM) AS month, SUM(AMT) FROM MONTHLY GROUP BY month"
    found = verdict("What were sales by month in 2024?", by_month, [["-4158-01", 10]])
    assert kinds(found) == ["date"]
    assert "SALES_YM of MONTHLY holds values like '202401', not dates" in found.doubts[0].say
    assert "'202401', '202402'" in found.doubts[0].hint
    # the same column used as it is, a text column written as dates, a date-typed column: no doubt
    for sql in (
        "SELECT SALES_YM, SUM(AMT) FROM MONTHLY GROUP BY SALES_YM",
        "SELECT strftime('%Y-%m', BOOKED), SUM(AMT) FROM MONTHLY GROUP BY 1",
        "SELECT strftime('%Y-%m', CLOSED_AT), SUM(AMT) FROM MONTHLY GROUP BY 1",
        "SELECT strftime('%Y-%m', SALES_YM, 'unixepoch'), SUM(AMT) FROM MONTHLY GROUP BY 1",
    ):
        assert kinds(verdict("What were sales by month in 2024?", sql, [["2024-01", 10], ["2024-02", 5]])) == []


def test_a_date_function_on_periods_written_as_digits_is_offered_as_the_digits_it_asks_for() -> None:
    asked = "What were sales by month in 2024?"
    by_month = "SELECT strftime('%Y-%m', SALES_YM) AS month, SUM(AMT) FROM MONTHLY GROUP BY month"
    found = verdict(asked, by_month, [["-4158-01", 10]])
    assert found.redated is not None
    assert found.redated.sql == (
        "SELECT SUBSTRING(SALES_YM, 1, 4) || '-' || SUBSTRING(SALES_YM, 5, 2) AS month, SUM(AMT) FROM MONTHLY "
        "GROUP BY month"
    )
    assert found.redated.note == "I read SALES_YM ('202401') as periods written as digits, not as dates."
    in_year = "SELECT SUM(AMT) FROM MONTHLY WHERE CAST(strftime('%Y', SALES_YM) AS INTEGER) = 2024"
    redone = verdict(asked, in_year, [[None]]).redated
    assert redone is not None
    assert redone.sql == "SELECT SUM(AMT) FROM MONTHLY WHERE CAST(SUBSTRING(SALES_YM, 1, 4) AS INTEGER) = 2024"
    # a day, or a week, is more than a year and month written as digits hold: left to the repair
    for sql in ("SELECT strftime('%Y-%m-%d', SALES_YM) FROM MONTHLY", "SELECT strftime('%W', SALES_YM) FROM MONTHLY"):
        found = verdict(asked, sql, [["-4158-01-01"], ["-4158-01-02"]])
        assert kinds(found) == ["date"], sql
        assert found.redated is None, sql
    # a column written as dates needs nothing
    assert verdict(asked, "SELECT strftime('%Y-%m', BOOKED) FROM MONTHLY", [["2024-01"]]).redated is None


def test_year_and_month_calls_on_periods_written_as_digits_stay_numbers_on_every_dialect() -> None:
    cards = {"M": {"columns": [{"name": "YM", "type": "INTEGER", "values": ["202401", "202312"]}, {"name": "AMT"}]}}
    probes = Probes(held=lambda *_: set(), sample=lambda *_: None)
    for sql, dialect, expected in (
        (
            "SELECT YEAR(YM), SUM(AMT) FROM M GROUP BY YEAR(YM)",
            "mysql",
            "SELECT CAST(SUBSTRING(CAST(YM AS CHAR), 1, 4) AS SIGNED), SUM(AMT) FROM M "
            "GROUP BY CAST(SUBSTRING(CAST(YM AS CHAR), 1, 4) AS SIGNED)",
        ),
        (
            "SELECT SUM(AMT) FROM M WHERE EXTRACT(MONTH FROM YM) = 12",
            "postgres",
            "SELECT SUM(AMT) FROM M WHERE CAST(SUBSTRING(CAST(YM AS TEXT) FROM 5 FOR 2) AS INT) = 12",
        ),
    ):
        record = SqlRecord("shop", sql, ["value"], [[1]], False, None)
        found = check("Sales by year", record, dialect, cards, (), probes)
        assert found.redated is not None, dialect
        assert found.redated.sql == expected, dialect


def test_an_identifier_the_question_does_not_name_is_a_doubt() -> None:
    sql = "SELECT COUNT(*) FROM ORDERS WHERE ORDER_ID = 'C000551'"
    found = verdict("How many orders were there?", sql, [[1]])
    assert kinds(found) == ["value"]  # the column holds it: only the filter nobody asked for is in doubt
    assert found.doubts[0].say == "I filtered on ORDER_ID = 'C000551', which the question does not name."
    assert kinds(verdict("How many orders did customer c000551 place?", sql, [[10]])) == []
    # an identifier the question names, written otherwise in the statement: doubted, never left out
    [mangled] = verdict("How many orders did customer C0551 place?", sql, [[1]]).doubts
    assert mangled.say == "I filtered on ORDER_ID = 'C000551', which the question does not name; it names 'C0551'."
    assert mangled.drop is None
    assert mangled.read_as == ("C0551", "C000551")  # the sentence says the rows are C000551's
    assert "'C0551'" in mangled.hint
    # a year, a month or a period code is no identifier
    monthly = "SELECT SUM(AMT) FROM MONTHLY WHERE SALES_YM = '202401'"
    assert kinds(verdict("Sales in January 2024", monthly, [[5]])) == []


def test_a_copy_needs_the_question_itself_to_ask_for_it() -> None:
    sql = "SELECT SUM(AMOUNT) FROM ORDERS_2023_12"
    [doubt] = verdict("show me revenue", sql, [[3]]).doubts
    assert (doubt.kind, doubt.table) == ("copy", "ORDERS")
    assert doubt.say.startswith("I read ORDERS_2023_12, a snapshot copy of ORDERS")
    assert kinds(verdict("What was the revenue in the December 2023 snapshot?", sql, [[3]])) == []
    assert kinds(verdict("What is the total in the backup?", "SELECT SUM(AMOUNT) FROM ORDERS_BAK", [[3]])) == []


def test_a_literal_in_another_script_or_case_is_rewritten_to_the_value_the_column_holds() -> None:
    korean = "SELECT COUNT(*) FROM ORDERS WHERE CITY = '부산'"
    found = verdict("2024년 부산으로 배송된 주문은 몇 건인가요?", korean, [])
    assert kinds(found) == []
    assert [(r.literal, r.value, r.column) for r in found.rewrites] == [("부산", "Busan", "ORDERS.CITY")]
    assert found.rewrites[0].note == "I read '부산' as 'Busan', as ORDERS.CITY writes it."
    # not in the card's sample: found by the probe of the column's values
    lower = verdict("How many orders went to incheon?", "SELECT COUNT(*) FROM ORDERS WHERE CITY = 'incheon'", [[0]])
    assert [(r.literal, r.value) for r in lower.rewrites] == [("incheon", "Incheon")]


def test_a_literal_no_column_value_means_is_a_doubt_and_one_the_question_wrote_that_matched_is_left_alone() -> None:
    nowhere = verdict("How many orders went to Atlantis?", "SELECT COUNT(*) FROM ORDERS WHERE CITY = 'Atlantis'", [])
    [doubt] = nowhere.doubts
    assert doubt.kind == "value"
    assert "'Seoul', 'Busan'" in doubt.hint
    matched = verdict("How many orders went to Busan?", "SELECT COUNT(*) FROM ORDERS WHERE CITY = 'Busan'", [[351]])
    assert (matched.doubts, matched.rewrites) == ([], [])


def test_korean_words_are_romanized_without_their_particles() -> None:
    assert [latin for _, latin in korean_words("2024년 부산으로")] == ["nyeon", "busaneuro", "busan"]
    assert [latin for _, latin in korean_words("서울에서")] == ["seoureseo", "seoul"]
    assert held_match("서울", ["Busan", "Seoul"]) == "Seoul"
    assert held_match("Seol", ["Seoul", "Busan"]) == "Seoul"  # a close spelling
    assert held_match("Atlantis", ["Seoul", "Busan"]) is None


@pytest.mark.parametrize(
    ("question", "doubted"),
    [
        ("What are the ids of the countries which have more than 3 car makers?", True),
        ("What major is every student who does not own a cat, and how old are they?", True),
        ("List the students who have a dog.", True),
        ("What language is spoken in Aruba?", False),  # one asked for: a LIMIT 1 may be how the model keeps it
        ("Which country has the most car makers?", False),
        ("What is the name of the oldest singer?", False),
        ("Which customer placed the first order?", False),
        ("What is the maximum capacity of the stadiums?", False),
        ("가장 많이 팔린 제품은?", False),
    ],
)
def test_a_limit_of_one_row_needs_a_question_that_asks_for_one_among_many(question: str, doubted: bool) -> None:
    sql = "SELECT NAME FROM COUNTRY GROUP BY NAME ORDER BY COUNT(*) DESC LIMIT 1"
    found = verdict(question, sql, [["Korea"]])
    assert kinds(found) == (["shape"] if doubted else [])
    if doubted:
        assert (
            found.doubts[0].hint == "The question asks for every row that matches, not the first one: remove LIMIT 1."
        )
    assert kinds(verdict(question, sql.replace("LIMIT 1", "LIMIT 20"), [["Korea"]])) == []
