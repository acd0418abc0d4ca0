"""A join whose columns share no values, left out when its table only filters (`workers.turns.join_drops`)."""

from __future__ import annotations

from workers.turns.join_checks import DisjointJoin
from workers.turns.join_drops import without_disjoint_join, without_missing_column_join

GROUP = DisjointJoin("P.CATEGORY = G.GROUP_NAME", ("PRODUCTS", "CODE_GROUPS"), "…")
COLUMNS = {
    "PRODUCTS": {"PRODUCT_ID", "CATEGORY", "NAME"},
    "CODE_GROUPS": {"GROUP_NAME", "IN_USE", "LABEL"},
    "SALES": {"PRODUCT_ID", "QTY"},
}
JOINED = "FROM PRODUCTS AS P JOIN CODE_GROUPS AS G ON P.CATEGORY = G.GROUP_NAME"


def test_a_filtering_join_goes_with_its_own_filters_and_the_rest_stays() -> None:
    sql = f"SELECT P.CATEGORY, COUNT(*) {JOINED} WHERE G.IN_USE = 'Y' AND P.NAME LIKE 'A%' GROUP BY P.CATEGORY"
    dropped = without_disjoint_join(sql, "sqlite", [GROUP], COLUMNS)
    assert dropped is not None
    assert dropped.sql == ("SELECT P.CATEGORY, COUNT(*) FROM PRODUCTS AS P WHERE P.NAME LIKE 'A%' GROUP BY P.CATEGORY")
    assert dropped.table == "CODE_GROUPS"
    assert dropped.condition == "PRODUCTS.CATEGORY = CODE_GROUPS.GROUP_NAME"
    assert dropped.filters == ("CODE_GROUPS.IN_USE = 'Y'",)
    assert not dropped.asked("Which category has the most products?")
    assert dropped.asked("Which category in use 'y' has the most products?")


def test_the_where_clause_goes_when_it_only_filtered_the_joined_table() -> None:
    sql = f"SELECT COUNT(*) {JOINED} WHERE G.IN_USE = 'Y'"
    dropped = without_disjoint_join(sql, None, [GROUP], COLUMNS)
    assert dropped is not None
    assert dropped.sql == "SELECT COUNT(*) FROM PRODUCTS AS P"


def test_a_join_that_does_more_than_filter_stays() -> None:
    stays = [
        f"SELECT G.LABEL, COUNT(*) {JOINED} GROUP BY G.LABEL",  # a column of it is read
        f"SELECT P.CATEGORY {JOINED} ORDER BY G.LABEL",  # ordered by one
        f"SELECT LABEL, COUNT(*) {JOINED} GROUP BY LABEL",  # an unqualified column it holds
        f"SELECT COUNT(*) {JOINED} WHERE G.LABEL = P.NAME",  # a filter comparing it with another table
        f"SELECT COUNT(*) {JOINED} JOIN SALES AS S ON S.PRODUCT_ID = G.GROUP_NAME",  # another join names it
        f"SELECT COUNT(*) {JOINED} WHERE P.NAME IN (SELECT G.LABEL FROM CODE_GROUPS AS G)",  # a nested query
        "SELECT COUNT(*) FROM CODE_GROUPS AS G JOIN PRODUCTS AS P ON P.CATEGORY = G.GROUP_NAME "
        "JOIN SALES AS S ON S.PRODUCT_ID = P.PRODUCT_ID WHERE S.QTY > 1 AND G.IN_USE = 'Y' AND P.NAME = G.LABEL",
        f"SELECT COUNT(*) {JOINED} UNION SELECT 1",  # a set operation
    ]
    for sql in stays:
        assert without_disjoint_join(sql, None, [GROUP], COLUMNS) is None, sql


def test_only_the_join_that_matched_nothing_is_left_out() -> None:
    sql = f"SELECT SUM(S.QTY) {JOINED} JOIN SALES AS S ON S.PRODUCT_ID = P.PRODUCT_ID"
    other = DisjointJoin("S.PRODUCT_ID = P.PRODUCT_ID", ("SALES", "PRODUCTS"), "…")
    dropped = without_disjoint_join(sql, None, [GROUP], COLUMNS)
    assert dropped is not None
    assert dropped.sql == "SELECT SUM(S.QTY) FROM PRODUCTS AS P JOIN SALES AS S ON S.PRODUCT_ID = P.PRODUCT_ID"
    # the sales join was not found disjoint in that statement's form: a different condition is not matched
    assert without_disjoint_join(f"SELECT COUNT(*) {JOINED}", None, [other], COLUMNS) is None


def test_a_join_on_a_column_its_table_lacks_goes_when_the_joined_table_only_filters() -> None:
    sql = "SELECT AVG(S.QTY) FROM SALES AS S JOIN PRODUCTS AS P ON S.CATEGORY = P.CATEGORY WHERE P.NAME = 'Tea'"
    dropped = without_missing_column_join(sql, "sqlite", "S.CATEGORY", COLUMNS)
    assert dropped is not None
    assert dropped.sql == "SELECT AVG(S.QTY) FROM SALES AS S"
    assert dropped.note() == (
        "I left out the join of PRODUCTS on SALES.CATEGORY = PRODUCTS.CATEGORY, and its filter PRODUCTS.NAME = "
        "'Tea': SALES has no column CATEGORY."
    )
    assert dropped.asked("What is the average quantity of tea sold?")
    # a column the table has, an unqualified one, or a joined table that does more than filter: left alone
    assert without_missing_column_join(sql, "sqlite", "P.CATEGORY", COLUMNS) is None
    assert without_missing_column_join(sql, "sqlite", "CATEGORY", COLUMNS) is None
    read = "SELECT P.NAME, SUM(S.QTY) FROM SALES AS S JOIN PRODUCTS AS P ON S.CATEGORY = P.CATEGORY GROUP BY 1"
    assert without_missing_column_join(read, "sqlite", "S.CATEGORY", COLUMNS) is None
