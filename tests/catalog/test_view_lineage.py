"""Which base columns each view column is computed from, as the engines write view definitions."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from catalog.view_lineage import direct_lineage, resolve_views

Key = tuple[str | None, str]
TABLES: dict[Key, list[str]] = {
    (None, "EMP_MST"): ["EMP_NO", "EMP_NM", "DEPT_CD", "SAL_AMT", "EMAIL"],
    (None, "ORD_MST"): ["ORD_NO", "EMP_NO", "SHIP_CITY", "TOT_AMT"],
}


def _lineage(sql: str, columns: list[str], dialect: str = "sqlite") -> list[list[tuple[str | None, str, str]]] | None:
    definition = sqlglot.parse_one(sql, read=dialect)
    assert isinstance(definition, exp.Query)
    return direct_lineage(definition, columns, TABLES, dialect)


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("sqlite", 'SELECT "EMP_NO", "DEPT_CD", "SAL_AMT" AS "PAY", "EMAIL" AS "MAILU" FROM "EMP_MST"'),
        ("sqlite", "SELECT emp_no, dept_cd, sal_amt AS pay, email mailu FROM emp_mst"),
        (
            "mysql",
            "select `EMP_MST`.`EMP_NO` AS `EMP_NO`,`EMP_MST`.`DEPT_CD` AS `DEPT_CD`,`EMP_MST`.`SAL_AMT` AS "
            "`PAY`,`EMP_MST`.`EMAIL` AS `MAILU` from `EMP_MST`",
        ),
        (
            "postgres",
            'SELECT "EMP_MST"."EMP_NO", "EMP_MST"."DEPT_CD", "EMP_MST"."SAL_AMT" AS "PAY", '
            '"EMP_MST"."EMAIL" AS "MAILU" FROM "EMP_MST"',
        ),
    ],
)
def test_renamed_columns_lead_to_their_base_columns_as_each_engine_writes_them(dialect: str, sql: str) -> None:
    found = _lineage(sql, ["EMP_NO", "DEPT_CD", "PAY", "MAILU"], dialect)
    assert found == [
        [(None, "EMP_MST", "EMP_NO")],
        [(None, "EMP_MST", "DEPT_CD")],
        [(None, "EMP_MST", "SAL_AMT")],
        [(None, "EMP_MST", "EMAIL")],
    ]


def test_a_star_a_join_an_expression_and_a_count() -> None:
    found = _lineage(
        "SELECT o.*, e.EMP_NM || ' ' || e.DEPT_CD AS who, CASE WHEN e.SAL_AMT > 5 THEN 'high' END AS band, "
        "(SELECT COUNT(*) FROM ORD_MST) AS orders FROM ORD_MST o JOIN EMP_MST e ON e.EMP_NO = o.EMP_NO",
        ["ORD_NO", "EMP_NO", "SHIP_CITY", "TOT_AMT", "who", "band", "orders"],
    )
    assert found is not None
    assert found[:4] == [[(None, "ORD_MST", c)] for c in ("ORD_NO", "EMP_NO", "SHIP_CITY", "TOT_AMT")]
    assert sorted(found[4]) == [(None, "EMP_MST", "DEPT_CD"), (None, "EMP_MST", "EMP_NM")]
    assert found[5] == [(None, "EMP_MST", "SAL_AMT")]
    assert found[6] == []  # computed from no column


def test_ctes_and_set_operations_follow_every_branch() -> None:
    found = _lineage(
        "WITH pay AS (SELECT EMP_NO, SAL_AMT * 12 AS yearly FROM EMP_MST) "
        "SELECT EMP_NO, yearly FROM pay UNION ALL SELECT EMP_NO, TOT_AMT FROM ORD_MST",
        ["EMP_NO", "AMOUNT"],
    )
    assert found is not None
    assert sorted(found[0]) == [(None, "EMP_MST", "EMP_NO"), (None, "ORD_MST", "EMP_NO")]
    assert sorted(found[1]) == [(None, "EMP_MST", "SAL_AMT"), (None, "ORD_MST", "TOT_AMT")]


def test_a_definition_that_does_not_match_the_views_columns_is_not_followed() -> None:
    assert _lineage("SELECT EMP_NO FROM EMP_MST", ["EMP_NO", "EXTRA"]) is None
    assert _lineage("SELECT EMP_NO FROM SOMEWHERE_ELSE", ["EMP_NO"]) is None


def test_views_behind_views_resolve_to_table_columns() -> None:
    columns: dict[Key, list[str]] = {**TABLES, (None, "V_PAY"): ["EMP_NO", "PAY"], (None, "V_OUTER"): ["WHO", "MONEY"]}
    direct: dict[Key, list[list[tuple[str | None, str, str]]] | None] = {
        (None, "V_PAY"): [[(None, "EMP_MST", "emp_no")], [(None, "EMP_MST", "sal_amt")]],
        (None, "V_OUTER"): [[(None, "V_PAY", "emp_no")], [(None, "V_PAY", "pay")]],
        (None, "V_BROKEN"): None,
    }
    columns[(None, "V_BROKEN")] = ["X"]
    resolved = resolve_views(direct, columns)
    assert resolved[(None, "V_OUTER")] == {
        "WHO": [[None, "EMP_MST", "EMP_NO"]],
        "MONEY": [[None, "EMP_MST", "SAL_AMT"]],
    }
    assert resolved[(None, "V_BROKEN")] is None
