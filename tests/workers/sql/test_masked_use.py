"""A query that computes with a masked column is refused instead of answering with a made-up figure: the sum of
hash-masked salaries came back as 8,181,441 on SQLite (the digits the hashes start with), `SAL_AMT > 5000000`
matched every row and `EMAIL = '...'` none. Uses that treat masked values as opaque tokens (reading, counting,
grouping, joining, comparing with a hash the user was shown) still run, on SQLite, MariaDB and PostgreSQL, through
derived tables, CTEs and views.
"""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from tests.workers.sql.conftest import SqlSource
from tests.workers.sql.test_mask_keys import ask, d10_staff, q

REFUSED = "is masked for you"


def _computing(source: SqlSource) -> list[str]:
    emp, sal, name, dept = (q(source, n) for n in ("EMP_MST", "SAL_AMT", "EMP_NM", "DEPT_CD"))
    cust, email = q(source, "CUST_MST"), q(source, "EMAIL")
    return [
        f"SELECT SUM({sal}) FROM {emp}",
        f"SELECT {dept}, AVG({sal}) FROM {emp} GROUP BY {dept}",
        f"SELECT MAX({sal}) FROM {emp}",
        f"SELECT COUNT(*) FROM {emp} WHERE {sal} > 5000000",
        f"SELECT COUNT(*) FROM {emp} WHERE {sal} = 4950000",
        f"SELECT {sal} * 12 FROM {emp}",
        f"SELECT UPPER({name}) FROM {emp}",
        f"SELECT COUNT(*) FROM {cust} WHERE {email} LIKE '%@%'",
        f"SELECT SUM(x.{sal}) FROM (SELECT * FROM {emp}) x",
        f"WITH pay AS (SELECT {sal} AS p FROM {emp}) SELECT AVG(p) FROM pay",
        f"SELECT SUM({sal}) FROM {q(source, 'V_STAFF')}",  # the view reads SAL_AMT as it is
    ]


def test_computing_with_a_masked_column_is_refused_with_what_still_works(
    session: Session, sql_source: SqlSource
) -> None:
    for sql in _computing(sql_source):
        outcome = ask(session, sql_source, sql)
        assert outcome.status == "denied", (sql, outcome.status, outcome.rows)
        assert str(outcome.error).startswith("no permission: ")
        assert outcome.rows == []
        assert REFUSED in str(outcome.error)
        assert "counted, grouped and joined on" in str(outcome.error)


def test_opaque_uses_of_a_masked_column_still_run(session: Session, sql_source: SqlSource) -> None:
    emp, sal, name, no = (q(sql_source, n) for n in ("EMP_MST", "SAL_AMT", "EMP_NM", "EMP_NO"))
    staff = d10_staff(sql_source)
    distinct = ask(session, sql_source, f"SELECT COUNT(DISTINCT {sal}), COUNT({sal}) FROM {emp}")
    assert distinct.status == "ok", distinct.error
    assert tuple(int(v) for v in distinct.rows[0]) == (len({s for _, s, _ in staff}), len(staff))
    grouped = ask(session, sql_source, f"SELECT {sal}, COUNT(*) FROM {emp} GROUP BY {sal} ORDER BY 2 DESC, 1")
    assert grouped.status == "ok", grouped.error
    joined = ask(
        session,
        sql_source,
        f"SELECT COUNT(*) FROM {emp} a JOIN {emp} b ON a.{name} = b.{name} WHERE a.{sal} IS NOT NULL",
    )
    assert joined.status == "ok", joined.error
    shown = ask(session, sql_source, f"SELECT {no}, {name} FROM {emp} ORDER BY 1")
    assert shown.status == "ok", shown.error
    first_no, first_hash = shown.rows[0]
    again = ask(session, sql_source, f"SELECT {no} FROM {emp} WHERE {name} = '{first_hash}'")
    assert again.status == "ok", again.error
    assert [r[0] for r in again.rows] == [first_no], "a hash the user was shown finds its row again"


def test_a_view_that_computes_with_a_masked_column_is_refused(session: Session, sqlite_sql_source: SqlSource) -> None:
    with sqlite_sql_source.admin.begin() as conn:
        conn.exec_driver_sql(
            'CREATE VIEW "V_DEPT_PAY" AS SELECT "DEPT_CD", SUM("SAL_AMT") AS "TOTAL" FROM "EMP_MST" GROUP BY "DEPT_CD"'
        )
    try:
        outcome = ask(session, sqlite_sql_source, 'SELECT "DEPT_CD", "TOTAL" FROM "V_DEPT_PAY"')
        assert outcome.status == "denied", outcome.rows
        assert "view V_DEPT_PAY computes with SAL_AMT" in str(outcome.error)
    finally:
        with sqlite_sql_source.admin.begin() as conn:
            conn.exec_driver_sql('DROP VIEW "V_DEPT_PAY"')


@pytest.mark.parametrize(
    "sql",
    [
        'SELECT SUM("TOT_AMT") FROM "ORD_MST"',  # filtered, not masked
        'SELECT MAX("EMP_NO") FROM "EMP_MST"',  # a column of a masked table that is not masked itself
    ],
)
def test_columns_that_are_not_masked_compute_as_ever(session: Session, sqlite_sql_source: SqlSource, sql: str) -> None:
    outcome = ask(session, sqlite_sql_source, sql)
    assert outcome.status == "ok", outcome.error
