"""A hypothesis-generated corpus of queries over the filtered ORD_MST and the masked CUST_MST, on every engine.

Each query is built from a template in which `{T}` (always aliased) stands for ORD_MST: run through `run_sql` as
the busan user it must return exactly what the same query returns to an administrator with `{T}` replaced by the
rows the filter admits (`SELECT * FROM ORD_MST WHERE SHIP_CITY = 'Busan'`), so no canary row comes back and no
admitted row is lost; queries that also read CUST_MST must return no masked value.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.orm import Session

from tests.workers.sql.canary import canary_source, exactly, leaks, q, quoter, run, secrets_of
from tests.workers.sql.conftest import ENGINES, SqlSource

EXAMPLES = 150
_secrets: dict[str, set[str]] = {}


@pytest.fixture(scope="module", params=ENGINES)
def policed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlSource]:
    yield from canary_source(request, tmp_path_factory, "rfc")


SELECTS = [
    "count(*)",
    "sum(t.{AMT})",
    "max(t.{AMT}), min(t.{AMT})",
    "t.{NO}, t.{AMT}",
    "t.{CITY}, count(*)",
    "t.{NO}, t.{CITY}, t.{CUST}",
    "count(DISTINCT t.{CITY})",
    "t.{NO}, sum(t.{AMT}) OVER (ORDER BY t.{NO})",
]
WHERES = [
    "",
    "WHERE t.{AMT} > 1000000",
    "WHERE t.{CITY} <> 'Busan'",
    "WHERE t.{CITY} = 'Canaryville' OR 1 = 1",
    "WHERE NOT (t.{CITY} = 'Busan')",
    "WHERE t.{NO} LIKE 'O%'",
    "WHERE t.{AMT} IS NULL OR t.{AMT} >= 0",
    "WHERE t.{NO} IN (SELECT u.{NO} FROM {T} u WHERE u.{AMT} > 500000)",
    "WHERE EXISTS (SELECT 1 FROM {T} u WHERE u.{NO} = t.{NO})",
]
SOURCES = [
    "{T} t",
    "{T} AS t",
    "(SELECT * FROM {T} z) t",
    "(SELECT * FROM {T} x WHERE 1 = 1) t",
    "(SELECT * FROM {T} z1 UNION ALL SELECT * FROM {T} z2) t",
    "(SELECT * FROM {T} s JOIN {C} c ON c.{CUST} = s.{CUST}) t",
]
WITHS = ["", "WITH w AS (SELECT * FROM {T} z) "]


@st.composite
def queries(draw: st.DrawFn) -> str:
    select = draw(st.sampled_from(SELECTS))
    source = draw(st.sampled_from(SOURCES))
    where = draw(st.sampled_from(WHERES))
    with_ = draw(st.sampled_from(WITHS))
    if with_ and draw(st.booleans()):
        source = "w t"
    if "JOIN {C}" in source and "*" in source:
        source = "(SELECT s.* FROM {T} s JOIN {C} c ON c.{CUST} = s.{CUST}) t"
    grouped = "count(*)" in select and "," in select
    sql = f"{with_}SELECT {select} FROM {source} {where}"
    if grouped:
        sql += " GROUP BY t.{CITY}"
    elif "count(" not in select and "sum(" not in select.split(" OVER")[0] and "max(" not in select:
        limit = draw(st.sampled_from(["", " ORDER BY t.{NO} DESC LIMIT 1", " ORDER BY t.{AMT} DESC, t.{NO} LIMIT 3"]))
        sql += limit
    return sql


def render(template: str, source: SqlSource, table: str) -> str:
    names = {"AMT": "TOT_AMT", "NO": "ORD_NO", "CITY": "SHIP_CITY", "CUST": "CUST_ID"}
    values = {k: q(source, v) for k, v in names.items()}
    return template.format(T=table, C=q(source, "CUST_MST"), **values)


def normal(rows: list[Any]) -> list[tuple[str, ...]]:
    def cell(value: Any) -> str:
        if isinstance(value, int | float | Decimal):
            return f"{float(value):.2f}"
        return str(value)

    return sorted(tuple(cell(v) for v in row) for row in rows)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(template=queries())
def test_generated_queries_see_exactly_the_filtered_rows(session: Session, policed: SqlSource, template: str) -> None:
    quote = quoter(policed)
    filtered = f"(SELECT * FROM {quote('ORD_MST')} WHERE {exactly(policed, 'SHIP_CITY', 'Busan')})"
    sql = render(template, policed, q(policed, "ORD_MST"))
    outcome = run(session, policed, sql)
    assert outcome.status == "ok", (sql, outcome.error)
    secret = _secrets.get(policed.name) or _secrets.setdefault(policed.name, secrets_of(policed))
    assert leaks(outcome, secret) == [], sql
    with policed.admin.connect() as conn:
        expected = [tuple(r) for r in conn.execute(text(render(template, policed, filtered)))]
    assert normal(outcome.rows) == normal(expected[:200]) or outcome.truncated, sql


MASKED_COLUMNS = ["CUST_NM", "EMAIL", "TEL_NO", "CITY_NM"]
WRAPS = ["{}", "upper({})", "lower({})", "substr({}, 1, 4)", "max({})", "min({})", "count(DISTINCT {})"]
MASKED_WHERES = [
    "",
    "WHERE {} LIKE '%@%'",
    "WHERE {} = 'canary@secret.example'",
    "WHERE {} IS NOT NULL",
    "WHERE {} > ''",
    "WHERE lower({}) LIKE '%canary%'",
]
MASKED_FROMS = ["{C} c", "(SELECT * FROM {C} x) c", "(SELECT * FROM {C} x UNION ALL SELECT * FROM {C} y) c"]


#: Masked for the corpus's user without being hidden (`tests.workers.sql.canary`): computing with them is refused.
COMPUTED_MASKED = {"CUST_NM", "EMAIL"}
#: Uses of a column that treat its values as opaque tokens, which masked columns allow.
OPAQUE_WRAPS = {"{}", "count(DISTINCT {})"}
OPAQUE_WHERES = {"", "WHERE {} IS NOT NULL"}


@st.composite
def masked_queries(draw: st.DrawFn) -> tuple[str, bool, bool]:
    """A query over CUST_MST's masked columns, whether it names the hidden TEL_NO and whether it computes with a
    masked (not hidden) column."""
    shown = draw(st.sampled_from(MASKED_COLUMNS))
    tested = draw(st.sampled_from(MASKED_COLUMNS))
    wrap = draw(st.sampled_from(WRAPS))
    chosen_where = draw(st.sampled_from(MASKED_WHERES))
    where = chosen_where.format("c.{" + tested + "}")
    source = draw(st.sampled_from(MASKED_FROMS))
    sql = f"SELECT {wrap.format('c.{' + shown + '}')} FROM {source} {where}"
    if "(" not in wrap or wrap.startswith(("upper", "lower", "substr")):
        sql += draw(st.sampled_from(["", " ORDER BY 1 DESC LIMIT 1", " ORDER BY 1 LIMIT 5"]))
    computes = (shown in COMPUTED_MASKED and wrap not in OPAQUE_WRAPS) or (
        tested in COMPUTED_MASKED and chosen_where not in OPAQUE_WHERES
    )
    return sql, "{TEL_NO}" in sql, computes


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=masked_queries())
def test_generated_queries_never_see_a_masked_value(
    session: Session, policed: SqlSource, query: tuple[str, bool, bool]
) -> None:
    template, names_hidden, computes = query
    names = {c: q(policed, c) for c in MASKED_COLUMNS}
    sql = template.format(C=q(policed, "CUST_MST"), **names)
    outcome = run(session, policed, sql)
    secret = _secrets.get(policed.name) or _secrets.setdefault(policed.name, secrets_of(policed))
    assert leaks(outcome, secret) == [], sql
    assert not [c for row in outcome.rows for c in row if isinstance(c, str) and "canary" in c.lower()], sql
    if computes:
        assert outcome.status == "denied", (sql, outcome.error)
        assert "is masked for you" in str(outcome.error)
    elif names_hidden:
        assert outcome.status == "error", (sql, outcome.error)
        assert outcome.error is not None
        assert "TEL_NO" in outcome.error  # named as the model wrote it, like any unknown column
    else:
        assert outcome.status == "ok", (sql, outcome.error)
