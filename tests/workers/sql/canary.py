"""The canary sample ERP for row-filter and mask tests: a private copy with an order outside the user's city and a
customer whose masked values must never come back, and helpers to run SQL as the busan user and look for leaks."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from core.access.permissions import Principal, RoleGrants
from core.config.file import Grant
from tests.workers.sql.conftest import SqlSource, scratch_source
from workers.sql import SqlOutcome, run_sql

CANARY_ORDER = "O-CANARY-0001"
CANARY_CITY = "Canaryville"
CANARY_AMOUNT = 987654321
CANARY_CUSTOMER = "C999999"
CANARY_NAME = "Canary Secret Trading"
CANARY_TEL = "010-9999-CANARY"
CANARY_EMAIL = "canary@secret.example"

BUSAN = RoleGrants(
    "busan",
    (
        Grant(
            database="*",
            deny=["EMP_MST"],
            row_filters={"ORD_MST": "SHIP_CITY = {user.city}"},
            column_masks={"CUST_MST.TEL_NO": "hide", "CUST_MST.EMAIL": "redact", "CUST_MST.CUST_NM": "hash"},
        ),
    ),
)
SEOUL = RoleGrants("seoul", (Grant(database="*", allow=["ORD_MST"], row_filters={"ORD_MST": "SHIP_CITY = 'Seoul'"}),))
CITIES = RoleGrants(
    "cities", (Grant(database="*", allow=["ORD_MST"], row_filters={"ORD_MST": "SHIP_CITY IN {user.cities}"}),)
)
EVERYTHING = RoleGrants("everything", (Grant(database="*", allow=["ORD_MST"]),))


#: Views over the filtered and the masked table (and a view over a view), on top of the conftest ones.
VIEWS = {
    "V_BUSAN": "SELECT {ORD_NO}, {TOT_AMT}, {SHIP_CITY} FROM {ORD_MST}",
    "V_BUSAN_OUTER": "SELECT v.{ORD_NO} FROM {V_BUSAN} v WHERE v.{TOT_AMT} IS NOT NULL OR 1 = 1",
    "V_CUSTOMERS": "SELECT {CUST_ID}, {CUST_NM}, {TEL_NO}, {EMAIL} FROM {CUST_MST}",
}


class _Quoted(dict[str, str]):
    def __init__(self, quote: Any) -> None:
        super().__init__()
        self.quote = quote

    def __missing__(self, key: str) -> str:
        return str(self.quote(key))


def user(*roles: RoleGrants, **attributes: str | tuple[str, ...]) -> Principal:
    return Principal(platform="slack", user_id="U_BUSAN", roles=roles, attributes=attributes)


BUSAN_USER = user(BUSAN, city="Busan")


def canary_source(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str
) -> Iterator[SqlSource]:
    """A private sample ERP on engine `request.param` with the canary order and customer added."""
    for source in scratch_source(tmp_path_factory, request.param, f"{name}_{request.param}"):
        q = quoter(source)
        with source.admin.begin() as conn:
            conn.execute(
                text(
                    f"INSERT INTO {q('ORD_MST')} ({q('ORD_NO')}, {q('ORD_DT')}, {q('CUST_ID')}, {q('STATUS_CODE')}, "
                    f"{q('TOT_AMT')}, {q('SHIP_CITY')}) VALUES (:o, :d, 'C000001', '40', :a, :c)"
                ),
                {"o": CANARY_ORDER, "d": "2024-01-05", "a": CANARY_AMOUNT, "c": CANARY_CITY},
            )
            conn.execute(
                text(
                    f"INSERT INTO {q('CUST_MST')} ({q('CUST_ID')}, {q('CUST_NM')}, {q('TEL_NO')}, {q('EMAIL')}, "
                    f"{q('REG_DT')}, {q('USE_YN')}, {q('CITY_NM')}) VALUES (:i, :n, :t, :e, :d, 'Y', 'Busan')"
                ),
                {"i": CANARY_CUSTOMER, "n": CANARY_NAME, "t": CANARY_TEL, "e": CANARY_EMAIL, "d": "2024-01-02"},
            )
            for name, body in VIEWS.items():
                conn.exec_driver_sql(f"CREATE VIEW {q(name)} AS {body.format_map(_Quoted(q))}")
        yield source


def quoter(source: SqlSource) -> Any:
    return source.admin.dialect.identifier_preparer.quote_identifier


def q(source: SqlSource, name: str) -> str:
    """`name` as the model would write it for the sample's upper-case names (PostgreSQL needs quotes)."""
    return f'"{name}"' if source.kind == "postgres" else name


def exactly(source: SqlSource, column: str, *values: str) -> str:
    """A condition that `column` (quoted) is one of `values`, compared exactly on every engine (MariaDB's collation
    ignores case and trailing spaces; row filters do not)."""
    quoted = quoter(source)(column)
    listed = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    if source.kind == "mariadb":
        return f"BINARY {quoted} IN ({', '.join('BINARY ' + v for v in listed.split(', '))})"
    return f"{quoted} IN ({listed})"


def run(session: Session, source: SqlSource, sql: str, principal: Principal = BUSAN_USER) -> SqlOutcome:
    source.register(session)
    return run_sql(session, source.settings, principal, source.name, sql)


def scalar(source: SqlSource, sql: str) -> Any:
    with source.admin.connect() as conn:
        return conn.execute(text(sql)).scalar_one()


def secrets_of(source: SqlSource) -> set[str]:
    """Every value the busan user must never read: the canaries and the real values of the masked columns."""
    found = {CANARY_ORDER, CANARY_CITY, CANARY_TEL, CANARY_EMAIL, CANARY_NAME}
    with source.admin.connect() as conn:
        cust = quoter(source)("CUST_MST")
        for column in ("TEL_NO", "EMAIL", "CUST_NM"):
            rows = conn.execute(text(f"SELECT {quoter(source)(column)} FROM {cust}"))
            found |= {str(v) for (v,) in rows if v is not None}
    return found


def leaks(outcome: SqlOutcome, secret: set[str]) -> list[Any]:
    """Cells of the result that are (or contain) a secret value, or the canary amount."""
    return [cell for row in outcome.rows for cell in row if cell is not None and _secret(cell, secret)]


def _secret(cell: Any, secret: set[str]) -> bool:
    if isinstance(cell, int | float | Decimal) and float(cell) == CANARY_AMOUNT:
        return True
    return str(cell) in secret or any(s in str(cell) for s in (CANARY_ORDER, CANARY_TEL, CANARY_EMAIL))
