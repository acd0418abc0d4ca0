"""A column qualified with the wrong table's alias moves to the one table of its SELECT that has it
(`workers.turns.column_qualifiers`)."""

from __future__ import annotations

from typing import Any

import pytest

from workers.turns.column_qualifiers import elsewhere, requalified
from workers.turns.join_pruning import Shown

TABLES = {
    "DOGS": Shown(frozenset({"dog_id", "owner_id", "name", "size_code"}), frozenset({"dog_id"})),
    "OWNERS": Shown(frozenset({"owner_id", "first_name", "last_name"}), frozenset({"owner_id"})),
    "TREATMENTS": Shown(frozenset({"treatment_id", "dog_id", "cost_of_treatment"}), frozenset({"treatment_id"})),
}


@pytest.mark.parametrize(
    ("sql", "fixed"),
    [
        (
            "SELECT DISTINCT T1.first_name, T1.last_name, T2.size_code FROM Dogs AS T1 "
            "JOIN Owners AS T2 ON T1.owner_id = T2.owner_id",
            "SELECT DISTINCT T2.first_name, T2.last_name, T1.size_code FROM Dogs AS T1 "
            "JOIN Owners AS T2 ON T1.owner_id = T2.owner_id",
        ),
        (  # the table's own name as the qualifier, and a subquery's SELECT checked on its own tables
            "SELECT Treatments.name FROM Dogs JOIN Treatments ON Dogs.dog_id = Treatments.dog_id "
            "WHERE Dogs.dog_id IN (SELECT o.dog_id FROM Owners AS o JOIN Dogs AS d ON o.owner_id = d.owner_id)",
            "SELECT Dogs.name FROM Dogs JOIN Treatments ON Dogs.dog_id = Treatments.dog_id "
            "WHERE Dogs.dog_id IN (SELECT d.dog_id FROM Owners AS o JOIN Dogs AS d ON o.owner_id = d.owner_id)",
        ),
    ],
)
def test_a_column_moves_to_the_one_table_that_has_it(sql: str, fixed: str) -> None:
    assert requalified(sql, "sqlite", TABLES) == fixed


@pytest.mark.parametrize(
    "sql",
    [
        # right as written
        "SELECT T1.name FROM Dogs AS T1 JOIN Owners AS T2 ON T1.owner_id = T2.owner_id",
        # both tables have the column: no single reading
        "SELECT T3.dog_id FROM Dogs AS T1 JOIN Treatments AS T2 ON T1.dog_id = T2.dog_id "
        "JOIN Owners AS T3 ON T1.owner_id = T3.owner_id",
        # no table has it
        "SELECT T1.age FROM Dogs AS T1 JOIN Owners AS T2 ON T1.owner_id = T2.owner_id",
        # a self-join: both aliases are the same table
        "SELECT a.first_name FROM Dogs AS a JOIN Dogs AS b ON a.dog_id = b.dog_id",
        # a join condition the move would turn into a column compared with its own table's: a table is missing
        "SELECT T2.first_name, COUNT(*) FROM Treatments AS T1 JOIN Owners AS T2 ON T1.owner_id = T2.owner_id "
        "GROUP BY T2.first_name",
        # one table: nothing to move to; and a statement that does not parse
        "SELECT d.first_name FROM Dogs AS d",
        "SELECT T1. FROM",
    ],
)
def test_anything_uncertain_is_left_as_written(sql: str) -> None:
    assert requalified(sql, "sqlite", TABLES) == sql


@pytest.mark.parametrize(
    ("sql", "fixed"),
    [
        (
            "SELECT size_code, COUNT(*) AS num_dogs FROM Dogs GROUP BY size_code ORDER BY num DESC LIMIT 1",
            "SELECT size_code, COUNT(*) AS num_dogs FROM Dogs GROUP BY size_code ORDER BY num_dogs DESC LIMIT 1",
        ),
        (  # a column of the tables, an alias written in full, two aliases that start alike: left as written
            "SELECT name AS name_of_dog, COUNT(*) AS n_total FROM Dogs GROUP BY name ORDER BY n_total",
            None,
        ),
        ("SELECT owner_id, COUNT(*) AS cost_a, SUM(1) AS cost_b FROM Dogs GROUP BY owner_id ORDER BY cost", None),
        ("SELECT x, COUNT(*) AS num_rows FROM Unshown GROUP BY x ORDER BY num", None),  # a table not shown
    ],
)
def test_an_alias_written_short_is_the_alias(sql: str, fixed: str | None) -> None:
    assert requalified(sql, "sqlite", TABLES) == (fixed or sql)


SHOWN = [("INV_HDR", ["INV_NO", "INV_DT", "ERP_ORD_NO"]), ("PAYMENT", ["PAY_NO", "INV_NO", "PAY_MTHD_CD"])]


def test_a_column_of_a_shown_table_the_query_does_not_read_is_named_with_the_join() -> None:
    sql = "SELECT COUNT(*) FROM INV_HDR WHERE PAY_MTHD_CD = 'MOBILE'"
    line = elsewhere(sql, "sqlite", "error: no such column: PAY_MTHD_CD", SHOWN)
    assert (
        line
        == "PAY_MTHD_CD is a column of PAYMENT, which the query does not read: join PAYMENT (shared columns: INV_NO)."
    )
    assert elsewhere(sql, "mysql", "error: Unknown column 'h.PAY_MTHD_CD' in 'where clause'", SHOWN).startswith(
        "PAY_MTHD_CD is a column of PAYMENT"
    )


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("SELECT COUNT(*) FROM INV_HDR WHERE PAY_MODE = 'MOBILE'", "no such column: PAY_MODE"),  # no table has it
        (  # the query reads the table that has it: the alias hint of run_sql covers that
            "SELECT COUNT(*) FROM INV_HDR AS h JOIN PAYMENT AS p ON h.INV_NO = p.INV_NO WHERE h.PAY_MTHD_CD = 'M'",
            "no such column: h.PAY_MTHD_CD",
        ),
        ("SELECT COUNT(*) FROM OTHER WHERE PAY_MTHD_CD = 'M'", "no such column: PAY_MTHD_CD"),  # a table not shown
        ("SELECT COUNT(*) FROM INV_HDR", "no such table: INV_HDR"),
    ],
)
def test_no_line_where_the_column_is_nowhere_else_to_be_found(sql: str, error: str) -> None:
    assert elsewhere(sql, "sqlite", error, SHOWN) == ""


def test_a_name_of_a_code_table_is_told_to_compare_the_coded_column_with_its_code() -> None:
    shown = [("ORD_MST", ["ORD_NO", "STATUS_CODE"]), ("CODE_DTL", ["CODE_GRP", "CODE_CD", "CODE_NM"])]
    status: dict[str, Any] = {
        "name": "STATUS_CODE",
        "codes": [{"code": "40", "meaning": "Delivered"}, {"code": "90", "meaning": "Cancelled"}],
        "codes_from": [[None, "CODE_DTL"]],
    }
    cards: dict[str, dict[str, Any]] = {"ORD_MST": {"columns": [{"name": "ORD_NO"}, status]}, "CODE_DTL": {}}
    sql = "SELECT COUNT(*) FROM ORD_MST WHERE STATUS_CODE = '90' AND CODE_NM = 'Cancelled'"
    line = elsewhere(sql, "sqlite", "no such column: CODE_NM", shown, cards)
    assert line == (
        "CODE_NM is a column of the code table CODE_DTL: STATUS_CODE already holds its codes (40=Delivered, "
        "90=Cancelled): compare STATUS_CODE with the code."
    )
    assert elsewhere(sql, "sqlite", "no such column: CODE_NM", shown).startswith(  # without the cards: the join
        "CODE_NM is a column of CODE_DTL, which the query does not read: join CODE_DTL"
    )


def test_a_join_on_a_column_the_table_lacks_is_told_the_table_in_between() -> None:
    shown = [
        ("PRODUCTS", ["PRD_CD", "CATEGORY"]),
        ("RETURNS", ["RET_NO", "ORD_NO", "LINE_NO", "RET_DT"]),
        ("ORDER_LINES", ["ORD_NO", "LINE_NO", "PRD_CD", "QTY"]),
    ]
    cards: dict[str, dict[str, Any]] = {
        "ORDER_LINES": {"primary_key": ["ORD_NO", "LINE_NO"], "foreign_keys": [{"columns": ["PRD_CD"]}]},
        "RETURNS": {"primary_key": ["RET_NO"]},
    }
    sql = "SELECT P.CATEGORY, COUNT(*) FROM PRODUCTS AS P JOIN RETURNS AS R ON P.PRD_CD = R.PRD_CD GROUP BY 1"
    line = elsewhere(sql, "sqlite", "error: no such column: R.PRD_CD", shown, cards)
    assert line == (
        "RETURNS has no column PRD_CD. ORDER_LINES has it and links to RETURNS: join RETURNS to ORDER_LINES on "
        "RETURNS.ORD_NO = ORDER_LINES.ORD_NO AND RETURNS.LINE_NO = ORDER_LINES.LINE_NO, then ORDER_LINES to "
        "PRODUCTS on PRD_CD."
    )
    # without keys to share, no path is guessed
    assert elsewhere(sql, "sqlite", "error: no such column: R.PRD_CD", shown, {}) == ""


def test_the_table_in_between_may_link_by_a_foreign_key_of_other_names() -> None:
    shown = [("cars_data", ["Id", "MPG"]), ("model_list", ["ModelId", "Model"]), ("car_names", ["MakeId", "Model"])]
    cards: dict[str, dict[str, Any]] = {
        "CARS_DATA": {"foreign_keys": [{"columns": ["Id"], "references": "car_names", "ref_columns": ["MakeId"]}]},
    }
    sql = "SELECT T2.Model FROM cars_data AS T1 JOIN model_list AS T2 ON T1.Model = T2.Model ORDER BY T1.MPG LIMIT 1"
    assert elsewhere(sql, "sqlite", "error: no such column: T1.Model", shown, cards) == (
        "cars_data has no column Model. car_names has it and links to cars_data: join cars_data to car_names on "
        "cars_data.Id = car_names.MakeId, then car_names to model_list on Model."
    )


ORDERS_AND_CUSTOMERS = [("ORD_MST", ["ORD_NO", "CUST_ID", "ORD_DT", "TOT_AMT"]), ("CUST_MST", ["CUST_ID", "REG_DT"])]
DATED_CARDS: dict[str, dict[str, Any]] = {
    "ORD_MST": {"columns": [{"name": "ORD_NO"}, {"name": "CUST_ID"}, {"name": "ORD_DT", "type": "DATE"}]},
    "CUST_MST": {"columns": [{"name": "CUST_ID"}, {"name": "REG_DT", "values": ["2021-03-04", "2023-11-30"]}]},
}


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(DISTINCT CUST_ID) FROM ORD_MST WHERE REG_DT LIKE '2024%'",
        "SELECT COUNT(DISTINCT o.CUST_ID) FROM ORD_MST AS o WHERE strftime('%Y', o.REG_DT) = '2024'",
    ],
)
def test_a_date_the_read_table_lacks_is_answered_with_its_own_date_not_a_join(sql: str) -> None:
    line = elsewhere(sql, "sqlite", "error: no such column: REG_DT", ORDERS_AND_CUSTOMERS, DATED_CARDS)
    assert line == (
        "ORD_MST has no column REG_DT: write ORD_DT instead of REG_DT. Do not join CUST_MST for REG_DT: that is the "
        "date of CUST_MST rows, not of ORD_MST rows."
    )


def test_a_missing_column_that_is_no_date_still_gets_the_join() -> None:
    cards = {**DATED_CARDS, "CUST_MST": {"columns": [{"name": "CUST_ID"}, {"name": "REG_DT", "type": "VARCHAR"}]}}
    sql = "SELECT COUNT(*) FROM ORD_MST WHERE REG_DT = 'web'"
    line = elsewhere(sql, "sqlite", "no such column: REG_DT", ORDERS_AND_CUSTOMERS, cards)
    assert line.startswith("REG_DT is a column of CUST_MST, which the query does not read: join CUST_MST")


def test_a_read_table_without_dates_of_its_own_gets_the_join() -> None:
    cards = {**DATED_CARDS, "ORD_MST": {"columns": [{"name": "ORD_NO"}, {"name": "ORD_DT", "type": "INTEGER"}]}}
    sql = "SELECT COUNT(*) FROM ORD_MST WHERE REG_DT LIKE '2024%'"
    line = elsewhere(sql, "sqlite", "no such column: REG_DT", ORDERS_AND_CUSTOMERS, cards)
    assert line.startswith("REG_DT is a column of CUST_MST, which the query does not read: join CUST_MST")


def test_several_dates_of_the_read_table_are_all_named() -> None:
    orders = DATED_CARDS["ORD_MST"]["columns"] + [{"name": "REG_DTM", "type": "DATETIME"}]
    cards = {**DATED_CARDS, "ORD_MST": {"columns": orders}}
    sql = "SELECT COUNT(*) FROM ORD_MST WHERE REG_DT >= '2024-01-01'"
    line = elsewhere(sql, "sqlite", "no such column: REG_DT", ORDERS_AND_CUSTOMERS, cards)
    assert line.startswith("ORD_MST has no column REG_DT: write ORD_DT or REG_DTM (the one the question means) ")
