"""Row filters and column masks on SQLite, MariaDB and PostgreSQL: a canary order outside the user's city and a
canary customer whose phone, e-mail and name are masked must never come back, however the query reads them.

The user has role `busan`: ORD_MST rows with SHIP_CITY = {user.city} (Busan), CUST_MST.TEL_NO hidden, EMAIL redacted,
CUST_NM hashed. Every query in `BYPASS_ATTEMPTS` (and the hypothesis corpus in test_row_filter_corpus.py) is run
through `run_sql`, and no returned cell may be a canary value or a masked column's real value.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.access.mask_key import mask_key
from core.access.permissions import RoleGrants
from core.store.models import ExecutedSql
from tests.workers.sql.canary import (
    BUSAN,
    CANARY_AMOUNT,
    CANARY_CITY,
    CANARY_CUSTOMER,
    CANARY_NAME,
    CANARY_ORDER,
    CITIES,
    EVERYTHING,
    SEOUL,
    canary_source,
    exactly,
    leaks,
    q,
    quoter,
    run,
    scalar,
    secrets_of,
    user,
)
from tests.workers.sql.conftest import ENGINES, SqlSource
from workers.tools.sql_tool import shown_sql


@pytest.fixture(scope="module", params=ENGINES)
def policed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlSource]:
    yield from canary_source(request, tmp_path_factory, "rf")


def bypass_attempts(source: SqlSource) -> list[str]:
    """Queries that try to read the canary order or a masked value; each must return neither."""
    o, c, d = q(source, "ORD_MST"), q(source, "CUST_MST"), q(source, "ORD_DTL_H")
    no, amt, city, cust = q(source, "ORD_NO"), q(source, "TOT_AMT"), q(source, "SHIP_CITY"), q(source, "CUST_ID")
    nm, email, tel = q(source, "CUST_NM"), q(source, "EMAIL"), q(source, "TEL_NO")
    quote = quoter(source)
    attempts = [
        f"SELECT * FROM {o}",
        f"SELECT {no}, {amt} FROM {o} ORDER BY {amt} DESC LIMIT 1",
        f"SELECT max({amt}), sum({amt}), count(*) FROM {o}",
        f"SELECT x.{no} FROM {o} AS x WHERE x.{no} = '{CANARY_ORDER}'",
        f"SELECT * FROM {o} WHERE {city} <> 'Busan' OR 1 = 1",
        f"SELECT * FROM (SELECT * FROM {o}) AS s ORDER BY {amt} DESC LIMIT 3",
        f"WITH t AS (SELECT * FROM {o}) SELECT {no}, {amt} FROM t ORDER BY {amt} DESC LIMIT 1",
        f"WITH {o} AS (SELECT * FROM {o}) SELECT max({amt}) FROM {o}",
        f"SELECT {no} FROM {o} UNION ALL SELECT {no} FROM {d} ORDER BY 1 LIMIT 5",
        f"SELECT {city}, count(*) FROM {o} GROUP BY {city}",
        f"SELECT {no}, rank() OVER (ORDER BY {amt} DESC) FROM {o} ORDER BY 2 LIMIT 1",
        f"SELECT sum({amt}) OVER () FROM {o} LIMIT 1",
        f"SELECT (SELECT max({amt}) FROM {o}) FROM {c} LIMIT 1",
        f"SELECT {nm} FROM {c} WHERE EXISTS (SELECT 1 FROM {o} WHERE {o}.{cust} = {c}.{cust} AND {amt} > 900000000)",
        f"SELECT c.{nm}, c.{email}, o.{amt} FROM {o} o JOIN {c} c ON c.{cust} = o.{cust} ORDER BY o.{amt} DESC LIMIT 1",
        f"SELECT {quote('ORD_NO')} FROM {quote(source.schema)}.{quote('ORD_MST')} ORDER BY {amt} DESC LIMIT 1",
        f"SELECT * FROM {c} WHERE {cust} = '{CANARY_CUSTOMER}'",
        f"SELECT {email}, count(*) FROM {c} GROUP BY {email}",
        f"SELECT {email} FROM {c} ORDER BY {email} DESC LIMIT 1",
        f"SELECT {nm} FROM {c} ORDER BY {nm} LIMIT 1",
        f"SELECT count(*) FROM {c} WHERE {email} LIKE 'canary%'",
        f"SELECT max({email}), min({nm}) FROM {c}",
        f"WITH x AS (SELECT {email} AS e FROM {c}) SELECT e FROM x WHERE e LIKE '%@%'",
        f"SELECT {tel} FROM {c}",
        f"SELECT max({tel}) FROM {c}",
        f"SELECT {quote('V_ORDERS')}.* FROM {quote('V_ORDERS')} ORDER BY {amt} DESC LIMIT 1",
        f"SELECT * FROM {quote('V_BUSAN_OUTER')} WHERE {no} = '{CANARY_ORDER}'",
        f"SELECT max({amt}), count(*) FROM {quote('V_BUSAN')} WHERE {city} = '{CANARY_CITY}'",
        f"SELECT * FROM {quote('V_CUSTOMERS')} WHERE {cust} = '{CANARY_CUSTOMER}'",
        f"SELECT {email}, {tel} FROM {quote('V_CUSTOMERS')} ORDER BY {email} DESC LIMIT 1",
        f"SELECT count(*) FROM {o} a, {o} b WHERE a.{no} = b.{no} AND a.{amt} > 900000000",
        f"SELECT {no} FROM {o} WHERE {no} IN (SELECT {no} FROM {o} WHERE {amt} > 900000000)",
        f"SELECT o.{no}, c.{email} FROM ({o} o JOIN {c} c ON c.{cust} = o.{cust}) ORDER BY o.{amt} DESC LIMIT 1",
        f"SELECT * FROM {o} NATURAL JOIN {c} ORDER BY {amt} DESC LIMIT 1",
        f"SELECT {no} FROM {o} WHERE {amt} = {CANARY_AMOUNT} -- */ UNION SELECT {no} FROM {o}",
        f"SELECT {no} FROM {o} /* ' */ WHERE {city} = 'Canaryville'",
    ]
    if source.kind == "postgres":
        attempts += [
            f'SELECT l."ORD_NO" FROM {c} c, LATERAL (SELECT * FROM {o} x WHERE x.{cust} = c.{cust}) l '
            f"ORDER BY l.{amt} DESC LIMIT 1",
            f"SELECT {o} FROM {o} ORDER BY {amt} DESC LIMIT 1",
            f"SELECT row_to_json(c) FROM {c} c LIMIT 3",
            f"SELECT string_agg({email}, ',') FROM {c}",
        ]
    else:
        attempts += [
            "SELECT ord_no FROM ord_mst ORDER BY tot_amt DESC LIMIT 1",
            f"SELECT group_concat({email}) FROM {c}",
        ]
    return attempts


MASKED_USE = "is masked for you"


def test_no_bypass_attempt_returns_a_canary_row_or_a_masked_value(session: Session, policed: SqlSource) -> None:
    secret = secrets_of(policed)
    attempts = bypass_attempts(policed)
    outcomes = [(sql, run(session, policed, sql)) for sql in attempts]
    for sql, outcome in outcomes:
        assert leaks(outcome, secret) == [], sql
    ok = [sql for sql, outcome in outcomes if outcome.status == "ok"]
    # Computing with a masked value (LIKE, string functions, aggregates over it) is refused before it runs.
    computed = [sql for sql, outcome in outcomes if outcome.status == "denied" and MASKED_USE in str(outcome.error)]
    print(f"{policed.kind}: {len(attempts)} bypass attempts, {len(ok)} ran, {len(computed)} refused, none leaked")
    for sql, outcome in outcomes:
        if outcome.status != "ok":
            print("  not run:", sql, "->", outcome.error)
    assert len(ok) + len(computed) >= len(attempts) - 4, [(s, o.error) for s, o in outcomes if o.status != "ok"]
    assert len(ok) >= len(attempts) // 2


def test_counts_sums_and_joins_see_only_the_users_rows(session: Session, policed: SqlSource) -> None:
    o, c, city, amt = q(policed, "ORD_MST"), q(policed, "CUST_MST"), q(policed, "SHIP_CITY"), q(policed, "TOT_AMT")
    qo, qamt = quoter(policed)("ORD_MST"), quoter(policed)("TOT_AMT")
    busan_count = scalar(policed, f"SELECT count(*) FROM {qo} WHERE {exactly(policed, 'SHIP_CITY', 'Busan')}")
    busan_sum = scalar(policed, f"SELECT sum({qamt}) FROM {qo} WHERE {exactly(policed, 'SHIP_CITY', 'Busan')}")
    assert 0 < busan_count < scalar(policed, f"SELECT count(*) FROM {qo}")
    outcome = run(session, policed, f"SELECT count(*), sum({amt}) FROM {o}")
    assert outcome.status == "ok", outcome.error
    assert [tuple(int(v) for v in outcome.rows[0])] == [(busan_count, int(busan_sum))]
    cust = q(policed, "CUST_ID")
    joined = run(session, policed, f"SELECT count(*) FROM {o} o JOIN {c} c ON c.{cust} = o.{cust}")
    assert int(joined.rows[0][0]) == busan_count
    cities = run(session, policed, f"SELECT DISTINCT {city} FROM {o}")
    assert cities.rows == [("Busan",)]


def test_a_hidden_column_is_an_unknown_column_and_star_leaves_it_out(session: Session, policed: SqlSource) -> None:
    c = q(policed, "CUST_MST")
    star = run(session, policed, f"SELECT * FROM {c} LIMIT 1")
    assert star.status == "ok", star.error
    assert "TEL_NO" not in star.columns
    assert "EMAIL" in star.columns
    hidden = run(session, policed, f"SELECT {q(policed, 'TEL_NO')} FROM {c}")
    unknown = run(session, policed, f"SELECT {q(policed, 'FAX_NO')} FROM {c}")
    assert hidden.status == unknown.status == "error"
    assert hidden.error is not None
    assert unknown.error is not None
    assert hidden.error.replace("TEL_NO", "X") == unknown.error.replace("FAX_NO", "X")
    assert "ts_r" not in hidden.error


def test_masked_values_stay_countable(session: Session, policed: SqlSource) -> None:
    c, email, nm = q(policed, "CUST_MST"), q(policed, "EMAIL"), q(policed, "CUST_NM")
    qc, qe, qn = quoter(policed)("CUST_MST"), quoter(policed)("EMAIL"), quoter(policed)("CUST_NM")
    outcome = run(session, policed, f"SELECT count(*), count({email}), count(DISTINCT {nm}) FROM {c}")
    assert outcome.status == "ok", outcome.error
    expected = (
        scalar(policed, f"SELECT count(*) FROM {qc}"),
        scalar(policed, f"SELECT count({qe}) FROM {qc}"),
        scalar(policed, f"SELECT count(DISTINCT {qn}) FROM {qc}"),
    )
    assert tuple(int(v) for v in outcome.rows[0]) == expected
    values = run(session, policed, f"SELECT {email}, {nm} FROM {c} WHERE {q(policed, 'CUST_ID')} = '{CANARY_CUSTOMER}'")
    assert values.rows == [("***", mask_key(policed.settings).digest(CANARY_NAME.encode()))]


def test_a_view_over_a_filtered_table_reads_the_filtered_rows(session: Session, policed: SqlSource) -> None:
    qo = quoter(policed)("ORD_MST")
    busan = scalar(policed, f"SELECT count(*) FROM {qo} WHERE {exactly(policed, 'SHIP_CITY', 'Busan')}")
    view = q(policed, "V_BUSAN")
    outcome = run(session, policed, f"SELECT count(*), max({q(policed, 'TOT_AMT')}) FROM {view}")
    assert outcome.status == "ok", outcome.error
    assert int(outcome.rows[0][0]) == busan
    assert outcome.policies == "rows of ORD_MST filtered (SHIP_CITY = {user.city})"
    aliased = run(session, policed, f"SELECT v.{q(policed, 'ORD_NO')} FROM {view} v ORDER BY 1 DESC LIMIT 1")
    assert aliased.status == "ok", aliased.error
    assert aliased.rows != [("O-CANARY-0001",)]
    nested = run(session, policed, f"SELECT count(*) FROM {q(policed, 'V_BUSAN_OUTER')}")
    assert nested.status == "ok", nested.error
    assert int(nested.rows[0][0]) == busan


def test_a_view_over_a_masked_table_reads_the_masked_values(session: Session, policed: SqlSource) -> None:
    outcome = run(session, policed, f"SELECT * FROM {q(policed, 'V_CUSTOMERS')}")
    assert outcome.status == "ok", outcome.error
    assert outcome.columns == ["CUST_ID", "CUST_NM", "TEL_NO", "EMAIL"]
    assert leaks(outcome, secrets_of(policed)) == []
    assert {row[2] for row in outcome.rows} == {None}
    assert {row[3] for row in outcome.rows} <= {None, "***"}


def test_two_roles_see_the_union_of_their_rows(session: Session, policed: SqlSource) -> None:
    qo = quoter(policed)("ORD_MST")
    both = scalar(policed, f"SELECT count(*) FROM {qo} WHERE {exactly(policed, 'SHIP_CITY', 'Busan', 'Seoul')}")
    sql = f"SELECT count(*) FROM {q(policed, 'ORD_MST')}"
    assert int(run(session, policed, sql, user(BUSAN, SEOUL, city="Busan")).rows[0][0]) == both
    assert int(run(session, policed, sql, user(CITIES, cities=("Busan", "Seoul"))).rows[0][0]) == both
    everything = scalar(policed, f"SELECT count(*) FROM {qo}")
    assert int(run(session, policed, sql, user(BUSAN, EVERYTHING, city="Busan")).rows[0][0]) == everything


def test_a_missing_attribute_matches_no_row(session: Session, policed: SqlSource) -> None:
    sql = f"SELECT count(*) FROM {q(policed, 'ORD_MST')}"
    assert int(run(session, policed, sql, user(BUSAN)).rows[0][0]) == 0
    assert int(run(session, policed, sql, user(BUSAN, city="")).rows[0][0]) == 0
    assert int(run(session, policed, sql, user(CITIES, cities=())).rows[0][0]) == 0
    seoul = exactly(policed, "SHIP_CITY", "Seoul")
    only_seoul = scalar(policed, f"SELECT count(*) FROM {quoter(policed)('ORD_MST')} WHERE {seoul}")
    assert int(run(session, policed, sql, user(BUSAN, SEOUL)).rows[0][0]) == only_seoul


def test_an_attribute_is_bound_never_pasted(session: Session, policed: SqlSource) -> None:
    sql = f"SELECT count(*) FROM {q(policed, 'ORD_MST')}"
    injected = user(BUSAN, city="Busan' OR '1' = '1")
    outcome = run(session, policed, sql, injected)
    assert outcome.status == "ok", outcome.error
    assert int(outcome.rows[0][0]) == 0
    assert outcome.sql_run is not None
    assert "Busan" not in outcome.sql_run
    percent = run(
        session, policed, f"SELECT count(*) FROM {q(policed, 'ORD_MST')} WHERE {q(policed, 'ORD_NO')} LIKE 'O%'"
    )
    assert percent.status == "ok", percent.error


def test_the_audit_keeps_the_models_sql_the_sql_run_and_what_applied(session: Session, policed: SqlSource) -> None:
    sql = f"SELECT count(*) FROM {q(policed, 'ORD_MST')}"
    outcome = run(session, policed, sql)
    row = session.scalars(select(ExecutedSql).order_by(ExecutedSql.id.desc()).limit(1)).one()
    assert row.sql == sql
    assert row.sql_run == outcome.sql_run
    assert row.sql_run is not None
    assert "ts_r" in row.sql_run
    assert row.policies == "rows of ORD_MST filtered (SHIP_CITY = {user.city})"
    assert shown_sql(sql, outcome) == f"{sql}\n-- for you: rows of ORD_MST filtered (SHIP_CITY = {{user.city}})"
    masked = run(session, policed, f"SELECT count(*) FROM {q(policed, 'CUST_MST')}")
    assert masked.policies == "CUST_MST.CUST_NM hashed; CUST_MST.EMAIL redacted"
    plain = run(session, policed, f"SELECT count(*) FROM {q(policed, 'PRD_MST')}")
    assert plain.sql_run is None
    assert plain.policies is None


def test_catalog_reads_are_refused_where_filters_or_masks_apply(session: Session, policed: SqlSource) -> None:
    catalog = RoleGrants("catalog", (BUSAN.grants[0].model_copy(update={"catalog": True}),))
    reader = user(catalog, city="Busan")
    sql = {
        "sqlite": "SELECT count(*) FROM sqlite_master",
        "mariadb": "SELECT count(*) FROM information_schema.COLUMNS",
        "postgres": "SELECT count(*) FROM pg_stats",
    }[policed.kind]
    outcome = run(session, policed, sql, reader)
    assert outcome.status == "refused", outcome.error
    assert outcome.error is not None
    assert "row filters or column masks apply to you" in outcome.error
