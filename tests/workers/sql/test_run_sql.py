"""`run_sql` end to end on SQLite, MariaDB and PostgreSQL sources: permissions through every way of naming a table
(subqueries, CTE aliases, quoting, schemas, case, views), outcomes for the model, caps, timeouts and the audit."""

from __future__ import annotations

import time
import tracemalloc

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.access.permissions import Principal, RoleGrants
from core.config.file import Grant
from core.store.models import ExecutedSql
from tests.workers.sql.conftest import NOBODY, STAFF, SqlSource
from workers.sql import SqlLimits, SqlOutcome, run_sql
from workers.sql.limits import MAX_CELL_CHARS
from workers.tools.sql_tool import result_text


def _q(source: SqlSource, name: str) -> str:
    """`name` quoted as the engine needs for the sample's upper-case names (PostgreSQL folds unquoted names)."""
    return f'"{name}"' if source.kind == "postgres" else name


def _run(session: Session, source: SqlSource, sql: str, principal: Principal = STAFF, **options: object) -> SqlOutcome:
    source.register(session)
    return run_sql(session, source.settings, principal, source.name, sql, **options)  # type: ignore[arg-type]


def _denied_forms(source: SqlSource) -> list[str]:
    emp, ord_ = _q(source, "EMP_MST"), _q(source, "ORD_MST")
    sal, emp_no, cust = _q(source, "SAL_AMT"), _q(source, "EMP_NO"), _q(source, "CUST_ID")
    quote = source.admin.dialect.identifier_preparer.quote_identifier
    forms = [
        f"SELECT {sal} FROM {emp}",
        f"SELECT * FROM {ord_} WHERE {_q(source, 'EMP_NO')} IN (SELECT {emp_no} FROM {emp})",
        f"SELECT * FROM (SELECT {sal} FROM {emp}) AS x",
        f"WITH staff AS (SELECT * FROM {emp}) SELECT count(*) FROM staff",
        f"SELECT {cust} FROM {ord_} UNION SELECT {emp_no} FROM {emp}",
        f"SELECT {sal} FROM {quote('EMP_MST')}",
        f"SELECT {sal} FROM {quote(source.schema)}.{quote('EMP_MST')}",
        f"SELECT count(*) FROM {source.schema}.{emp}",
        "SELECT count(*) FROM emp_mst",
        f"SELECT count(*) FROM {ord_} o JOIN {emp} e ON 1 = 1",
        f"WITH EMP_MST AS (SELECT * FROM {emp}) SELECT * FROM EMP_MST",
    ]
    if source.kind == "postgres":
        forms.append('SELECT count(*) FROM public."EMP_MST" e')
    return forms


def test_a_denied_table_is_refused_however_it_is_named(session: Session, sql_source: SqlSource) -> None:
    for sql in _denied_forms(sql_source):
        outcome = _run(session, sql_source, sql)
        assert outcome.status == "denied", (sql, outcome.error)
        assert outcome.error is not None
        assert outcome.error.startswith("no permission:")
        assert "emp_mst" in outcome.error.lower()
        assert outcome.rows == []
        assert outcome.columns == []
    # The operator may read it.
    plain = f"SELECT count(*) FROM {_q(sql_source, 'EMP_MST')}"
    assert _run(session, sql_source, plain, Principal.for_operator()).status == "ok"


def test_a_cte_named_like_a_denied_table_reading_allowed_tables_is_accepted(
    session: Session, sql_source: SqlSource
) -> None:
    ord_ = _q(sql_source, "ORD_MST")
    sql = f"WITH EMP_MST AS (SELECT * FROM {ord_}) SELECT count(*) FROM EMP_MST"
    outcome = _run(session, sql_source, sql)
    assert outcome.status == "ok", outcome.error
    assert outcome.rows == [(20000,)]


def test_views_over_denied_tables_are_refused_without_naming_them(session: Session, sql_source: SqlSource) -> None:
    for view in ("V_STAFF", "V_STAFF_OUTER"):
        outcome = _run(session, sql_source, f"SELECT count(*) FROM {_q(sql_source, view)}")
        assert outcome.status == "denied", outcome.error
        assert outcome.error is not None
        assert view in outcome.error
        assert "EMP_MST" not in outcome.error
        assert "V_STAFF " not in outcome.error.replace(view, "")
    allowed = _run(session, sql_source, f"SELECT count(*) FROM {_q(sql_source, 'V_ORDERS')}")
    assert allowed.status == "ok", allowed.error
    assert allowed.rows == [(20000,)]


def test_ordinary_analytics_sql_returns_rows(session: Session, sql_source: SqlSource) -> None:
    o, c = _q(sql_source, "ORD_MST"), _q(sql_source, "CUST_MST")
    cid, amt, nm = _q(sql_source, "CUST_ID"), _q(sql_source, "TOT_AMT"), _q(sql_source, "CUST_NM")
    sql = (
        f"WITH totals AS (SELECT {cid}, SUM({amt}) AS total, COUNT(*) AS n FROM {o} GROUP BY {cid}) "
        f"SELECT c.{nm}, t.total, t.n, RANK() OVER (ORDER BY t.total DESC) AS rnk "
        f"FROM totals t JOIN {c} c ON c.{cid} = t.{cid} ORDER BY t.total DESC LIMIT 5"
    )
    outcome = _run(session, sql_source, sql)
    assert outcome.status == "ok", outcome.error
    assert [col.lower() for col in outcome.columns] == ["cust_nm", "total", "n", "rnk"]
    assert len(outcome.rows) == 5
    assert not outcome.truncated
    assert [row[3] for row in outcome.rows] == [1, 2, 3, 4, 5]
    assert outcome.database == sql_source.name
    assert outcome.duration_ms > 0


def test_refusals_errors_and_their_messages(session: Session, sql_source: SqlSource) -> None:
    o = _q(sql_source, "ORD_MST")
    refused = _run(session, sql_source, f"SELECT 1; DELETE FROM {o}")
    assert refused.status == "refused"
    assert refused.error == "refused: only one statement may run; send a single SELECT without ';' between statements"
    banned = _run(session, sql_source, f"SELECT count(*) FROM {o} WHERE {_q(sql_source, 'TOT_AMT')} > SLEEP(1)")
    assert banned.status == "refused"
    assert "SLEEP is not allowed" in (banned.error or "")
    broken = _run(session, sql_source, f"SELECT ORD_AMT FROM {o}")
    assert broken.status == "error"
    assert broken.error is not None
    assert broken.error.startswith("error: ")
    assert "ord_amt" in broken.error.lower()
    catalog = _run(session, sql_source, "SELECT * FROM information_schema.tables")
    assert catalog.status == "refused"
    assert "system catalogs" in (catalog.error or "")


def test_unknown_and_forbidden_databases(session: Session, sql_source: SqlSource) -> None:
    sql_source.register(session)
    unknown = run_sql(session, sql_source.settings, STAFF, "nowhere", "SELECT 1")
    assert unknown.status == "refused"
    assert unknown.error is not None
    assert "nowhere" in unknown.error
    assert sql_source.name in unknown.error
    forbidden = run_sql(session, sql_source.settings, NOBODY, sql_source.name, "SELECT 1")
    assert forbidden.status == "denied"
    assert forbidden.error == f"no permission: you may not query database {sql_source.name}"
    nothing_listed = run_sql(session, sql_source.settings, NOBODY, "nowhere", "SELECT 1")
    assert nothing_listed.error is not None
    assert sql_source.name not in nothing_listed.error


def test_huge_results_are_capped_with_bounded_memory(session: Session, sql_source: SqlSource) -> None:
    tracemalloc.start()
    started = time.monotonic()
    try:
        outcome = _run(session, sql_source, sql_source.big_sql, limits=SqlLimits(max_rows=50))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.status == "ok", outcome.error
    assert len(outcome.rows) == 50
    assert outcome.truncated
    assert time.monotonic() - started < 10
    assert peak < 20 * 1024 * 1024


def test_a_slow_query_times_out_and_the_source_stays_usable(session: Session, sql_source: SqlSource) -> None:
    started = time.monotonic()
    outcome = _run(session, sql_source, sql_source.slow_sql, limits=SqlLimits(timeout_s=1.0))
    assert time.monotonic() - started < 1.0 + 5
    assert outcome.status == "timeout"
    assert outcome.error == "timeout: the query ran longer than 1 s; narrow it or aggregate in SQL"
    again = _run(session, sql_source, f"SELECT count(*) FROM {_q(sql_source, 'CUST_MST')}")
    assert again.status == "ok"
    assert again.rows[0][0] > 0


def test_every_call_is_audited(session: Session, sql_source: SqlSource) -> None:
    source = sql_source.register(session)
    ok_sql = f"SELECT count(*) FROM {_q(sql_source, 'ORD_MST')}"
    calls = [
        (ok_sql, "ok"),
        (f"SELECT * FROM {_q(sql_source, 'EMP_MST')}", "denied"),
        ("DROP TABLE x", "refused"),
        (f"SELECT nope FROM {_q(sql_source, 'ORD_MST')}", "error"),
    ]
    for sql, status in calls:
        assert _run(session, sql_source, sql).status == status
    rows = session.scalars(select(ExecutedSql).where(ExecutedSql.source_id == source.id).order_by(ExecutedSql.id)).all()
    recorded = [(r.sql, r.status) for r in rows[-4:]]
    assert recorded == calls
    first = rows[-4]
    assert (first.user_platform, first.user_id, first.row_count, first.truncated) == ("slack", "U_STAFF", 1, False)
    assert first.duration_ms is not None
    assert first.error is None
    assert all(r.error for r in rows[-3:])
    assert all(r.row_count is None for r in rows[-3:])


def test_engines_are_cached_per_source(session: Session, sql_source: SqlSource) -> None:
    from workers.sql.engines import engine_for

    source = sql_source.register(session)
    assert engine_for(sql_source.settings, source) is engine_for(sql_source.settings, source)


def test_names_outside_the_source_are_refused(session: Session, sql_source: SqlSource) -> None:
    other = {"sqlite": "other.ORD_MST", "mariadb": "some_other_db.ORD_MST", "postgres": 'otherdb.public."ORD_MST"'}
    outcome = _run(session, sql_source, f"SELECT count(*) FROM {other[sql_source.kind]}")
    assert outcome.status == "refused", outcome.error
    if sql_source.kind == "postgres":
        for catalog in ("SELECT * FROM pg_class", "SELECT * FROM pg_tables", "SELECT * FROM pg_catalog.pg_views"):
            found = _run(session, sql_source, catalog)
            assert found.status == "refused", catalog
            assert "system catalogs" in (found.error or ""), catalog


CATALOG_READS = {
    "sqlite": ("SELECT name FROM pragma_table_info('ORD_MST')", "SELECT count(*) FROM sqlite_master"),
    "mariadb": (
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'ORD_MST'",
        "SELECT @@version",
    ),
    "postgres": (
        "SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = 'public.\"ORD_MST\"'::regclass",
        "SELECT count(*) FROM information_schema.tables",
    ),
}


def test_catalog_reads_need_a_role_that_grants_them(session: Session, sql_source: SqlSource) -> None:
    granted = Principal(
        platform="slack",
        user_id="U_DBA",
        roles=(RoleGrants(name="dba", grants=(Grant(database="*", deny=["EMP_MST"], catalog=True),)),),
    )
    for sql in CATALOG_READS[sql_source.kind]:
        for principal in (STAFF, Principal.for_operator()):
            refused = _run(session, sql_source, sql, principal)
            assert refused.status == "refused", (sql, refused.error)
            assert not refused.rows
        allowed = _run(session, sql_source, sql, granted)
        assert allowed.status == "ok", (sql, allowed.error)
        assert allowed.rows
    # the grant opens the catalog, not the tables the role denies
    emp = _q(sql_source, "EMP_MST")
    assert _run(session, sql_source, f"SELECT count(*) FROM {emp}", granted).status == "denied"


def test_long_values_are_cut_and_the_model_is_told(session: Session, sql_source: SqlSource) -> None:
    long_text = {
        "sqlite": "SELECT replace(hex(zeroblob(3000)), '0', 'a') AS t",
        "mariadb": "SELECT repeat('a', 6000) AS t",
        "postgres": "SELECT repeat('a', 6000) AS t",
    }[sql_source.kind]
    outcome = _run(session, sql_source, long_text)
    assert outcome.status == "ok", outcome.error
    assert len(outcome.rows[0][0]) <= MAX_CELL_CHARS + 1
    assert outcome.values_cut == 1
    assert f"(1 long value was cut to {MAX_CELL_CHARS} characters)" in result_text(outcome, SqlLimits())
