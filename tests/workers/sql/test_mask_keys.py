"""Keyed `hash` masks (issue 30 item 4): on SQLite, MariaDB and PostgreSQL a hash-masked value is HMAC-SHA-256 under
the installation's key, so the dictionary attacks that recovered every salary from unsalted MD5 recover nothing, in
or outside the database; equal values still hash equal; a rotated key changes every hash without a restart; the key
never reaches a result, an error, the log or the audit; and without a usable key a hash mask refuses the query
instead of hashing unkeyed.

The user is the issue's `slack:U1` with `busan_sales`: ORD_MST, CUST_MST and EMP_MST filtered to Busan and department
D10, CUST_MST.TEL_NO hidden, CUST_MST.EMAIL, EMP_MST.SAL_AMT and EMP_MST.EMP_NM hashed, EMP_MST.EMAIL redacted.
"""

from __future__ import annotations

import hashlib
import logging
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from core.access.mask_key import MaskKey, mask_key, rotate_key_file
from core.access.permissions import Principal, RoleGrants
from core.config.file import Grant
from core.config.settings import Settings
from core.store.models import ExecutedSql
from tests.support import isolated_settings
from tests.workers.sql.conftest import SqlSource
from workers.sql import SqlOutcome, run_sql
from workers.sql.engines import engine_for
from workers.tools.sql_tool import shown_sql

BUSAN_SALES = RoleGrants(
    "busan_sales",
    (
        Grant(
            database="erp*",
            allow=["*"],
            deny=["ORD_MST_*", "CUST_MST_TMP"],
            row_filters={
                "ORD_MST": "SHIP_CITY = {user.city}",
                "CUST_MST": "CITY_NM = {user.city}",
                "EMP_MST": "DEPT_CD IN {user.departments}",
            },
            column_masks={
                "CUST_MST.TEL_NO": "hide",
                "CUST_MST.EMAIL": "hash",
                "EMP_MST.SAL_AMT": "hash",
                "EMP_MST.EMP_NM": "hash",
                "EMP_MST.EMAIL": "redact",
            },
        ),
    ),
)
U1 = Principal(
    platform="slack", user_id="U1", roles=(BUSAN_SALES,), attributes={"city": "Busan", "departments": ("D10",)}
)
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def q(source: SqlSource, name: str) -> str:
    return f'"{name}"' if source.kind == "postgres" else name


def ask(session: Session, source: SqlSource, sql: str, settings: Settings | None = None) -> SqlOutcome:
    source.register(session)
    return run_sql(session, settings or source.settings, U1, source.name, sql)


def admin_rows(source: SqlSource, sql: str) -> list[tuple[Any, ...]]:
    with source.admin.connect() as conn:
        return [tuple(row) for row in conn.execute(text(sql))]


def d10_staff(source: SqlSource) -> list[tuple[str, Any, str]]:
    """(EMP_NO, SAL_AMT, EMP_NM) of the rows U1 may see, read by the admin and filtered exactly in Python."""
    quote = source.admin.dialect.identifier_preparer.quote_identifier
    rows = admin_rows(
        source,
        f"SELECT {quote('EMP_NO')}, {quote('SAL_AMT')}, {quote('EMP_NM')}, {quote('DEPT_CD')} FROM {quote('EMP_MST')}",
    )
    return sorted((no, sal, name) for no, sal, name, dept in rows if dept == "D10")


def busan_emails(source: SqlSource) -> list[str | None]:
    quote = source.admin.dialect.identifier_preparer.quote_identifier
    rows = admin_rows(source, f"SELECT {quote('EMAIL')}, {quote('CITY_NM')} FROM {quote('CUST_MST')}")
    return [email for email, city in rows if city == "Busan"]


def salary_text(source: SqlSource, value: Any) -> str:
    """A salary as the engine writes it before hashing (NUMERIC(14,2): SQLite keeps an integer)."""
    if source.kind == "sqlite":
        return str(int(value))
    return f"{Decimal(value):.2f}"


def test_hash_masks_are_hmac_sha256_under_the_installations_key(session: Session, sql_source: SqlSource) -> None:
    key = mask_key(sql_source.settings)
    outcome = ask(
        session,
        sql_source,
        f"SELECT {q(sql_source, 'EMP_NO')}, {q(sql_source, 'SAL_AMT')}, {q(sql_source, 'EMP_NM')} "
        f"FROM {q(sql_source, 'EMP_MST')} ORDER BY 1",
    )
    assert outcome.status == "ok", outcome.error
    staff = d10_staff(sql_source)
    assert [row[0] for row in outcome.rows] == [no for no, _, _ in staff]
    for (_, salary, name), (_, shown_salary, shown_name) in zip(staff, outcome.rows, strict=True):
        assert shown_name == key.digest(name.encode("utf-8"))
        assert shown_salary == key.digest(salary_text(sql_source, salary).encode("utf-8"))
    assert outcome.policies is not None
    assert "EMP_MST.SAL_AMT hashed" in outcome.policies


def _dictionary(values: list[Any]) -> set[str]:
    """Every MD5 and SHA-256 an attacker would try offline: each real value in the usual text forms, and every round
    salary up to 50,000,000 with and without cents."""
    guesses: set[str] = set()
    for value in values:
        if value is None:
            continue
        forms = {str(value), str(value).strip(), str(value).lower(), str(value).upper()}
        if isinstance(value, int | float | Decimal):
            forms |= {str(int(value)), f"{Decimal(value):.2f}"}
        guesses |= forms
    guesses |= {str(n) for n in range(0, 50_000_001, 10_000)} | {f"{n}.00" for n in range(0, 50_000_001, 10_000)}
    hashed = set()
    for guess in guesses:
        data = guess.encode("utf-8")
        hashed.add(hashlib.md5(data, usedforsecurity=False).hexdigest())
        hashed.add(hashlib.sha256(data).hexdigest())
    return hashed


def test_the_offline_dictionary_attack_recovers_nothing(session: Session, sql_source: SqlSource) -> None:
    """Issue 30 item 4: with unsalted MD5, all 18 salaries, 14 of 18 names and 106 of 158 e-mails were recovered."""
    emp = ask(
        session,
        sql_source,
        f"SELECT {q(sql_source, 'SAL_AMT')}, {q(sql_source, 'EMP_NM')} FROM {q(sql_source, 'EMP_MST')}",
    )
    cust = ask(session, sql_source, f"SELECT {q(sql_source, 'EMAIL')} FROM {q(sql_source, 'CUST_MST')}")
    assert emp.status == cust.status == "ok", (emp.error, cust.error)
    seen = [value for row in emp.rows + cust.rows for value in row if value is not None]
    assert len(seen) > 30
    real = [value for _, salary, name in d10_staff(sql_source) for value in (salary, name)] + busan_emails(sql_source)
    recovered = set(map(str, seen)) & _dictionary(real)
    assert recovered == set()
    assert all(HEX64.match(str(value)) for value in seen)


@pytest.mark.postgres
def test_guessing_inside_postgresql_finds_nothing(session: Session, postgres_sql_source: SqlSource) -> None:
    guesses = (
        "md5(g.x::text), md5(g.x::text || '.00'), encode(sha256(convert_to(g.x::text, 'UTF8')), 'hex'), "
        "encode(sha256(convert_to(g.x::text || '.00', 'UTF8')), 'hex')"
    )
    outcome = ask(
        session,
        postgres_sql_source,
        f'SELECT e."SAL_AMT", g.x FROM "EMP_MST" e JOIN generate_series(0, 50000000, 10000) g(x) '
        f'ON e."SAL_AMT" IN ({guesses})',
    )
    assert outcome.rows == []
    assert outcome.status == "denied", "comparing a masked value with a computed guess is refused outright"
    assert outcome.error is not None
    assert "SAL_AMT of EMP_MST is masked for you (hash)" in outcome.error
    keyed = _dictionary([salary for _, salary, _ in d10_staff(postgres_sql_source)])
    shown = ask(session, postgres_sql_source, 'SELECT e."SAL_AMT" FROM "EMP_MST" e')
    assert shown.status == "ok", shown.error
    assert {row[0] for row in shown.rows} & keyed == set(), "nor does any guess match a hash the user is shown"


@pytest.mark.mariadb
def test_guessing_inside_mariadb_finds_nothing(session: Session, mariadb_sql_source: SqlSource) -> None:
    n = "g.seq * 10000"
    guesses = f"MD5({n}), MD5(CONCAT({n}, '.00')), SHA2({n}, 256), SHA2(CONCAT({n}, '.00'), 256)"
    outcome = ask(
        session,
        mariadb_sql_source,
        f"SELECT e.SAL_AMT, g.seq FROM EMP_MST e JOIN seq_0_to_5000 g ON e.SAL_AMT IN ({guesses})",
    )
    assert outcome.rows == []
    assert outcome.status == "denied", "comparing a masked value with a computed guess is refused outright"
    assert outcome.error is not None
    assert "SAL_AMT of EMP_MST is masked for you (hash)" in outcome.error


def test_equal_values_still_hash_equal(session: Session, sql_source: SqlSource) -> None:
    c, email = q(sql_source, "CUST_MST"), q(sql_source, "EMAIL")
    emails = [e for e in busan_emails(sql_source) if e is not None]
    distinct = ask(session, sql_source, f"SELECT count(DISTINCT {email}), count({email}) FROM {c}")
    assert distinct.status == "ok", distinct.error
    assert tuple(int(v) for v in distinct.rows[0]) == (len(set(emails)), len(emails))
    pairs = sum(emails.count(e) for e in emails)  # rows of the self-join on the e-mail
    joined = ask(session, sql_source, f"SELECT count(*) FROM {c} a JOIN {c} b ON a.{email} = b.{email}")
    assert joined.status == "ok", joined.error
    assert int(joined.rows[0][0]) == pairs
    sal, emp = q(sql_source, "SAL_AMT"), q(sql_source, "EMP_MST")
    groups = ask(session, sql_source, f"SELECT count(*) FROM {emp} GROUP BY {sal} ORDER BY 1 DESC")
    salaries = [salary for _, salary, _ in d10_staff(sql_source)]
    assert sorted((int(r[0]) for r in groups.rows), reverse=True) == sorted(
        (salaries.count(s) for s in set(salaries)), reverse=True
    )


def test_a_rotated_key_changes_every_hash_without_a_restart(
    session: Session, sql_source: SqlSource, tmp_path: Path
) -> None:
    settings = isolated_settings(tmp_path / "home", config=sql_source.settings.config_path)
    sql = f"SELECT {q(sql_source, 'EMP_NO')}, {q(sql_source, 'EMP_NM')} FROM {q(sql_source, 'EMP_MST')} ORDER BY 1"
    before = ask(session, sql_source, sql, settings)
    engine = engine_for(settings, sql_source.register(session))
    rotate_key_file(settings)
    after = ask(session, sql_source, sql, settings)
    assert before.status == after.status == "ok", (before.error, after.error)
    assert engine_for(settings, sql_source.register(session)) is engine  # the same process and engine
    assert [r[0] for r in before.rows] == [r[0] for r in after.rows]
    assert not {r[1] for r in before.rows} & {r[1] for r in after.rows}
    key = mask_key(settings)
    assert [r[1] for r in after.rows] == [key.digest(name.encode()) for _, _, name in d10_staff(sql_source)]


#: Statements that fail on the engine after the rewrite; the MariaDB one fails where its error quotes the masked
#: subquery (MariaDB has no aggregate FILTER), so the quoted text would reach the key's placeholders.
FAILING = {
    "sqlite": 'SELECT "EMP_NM" FROM "EMP_MST" WHERE "EMP_NO" = 1 + no_such_column',
    "mariadb": "SELECT count(*) FILTER (WHERE 1) FROM EMP_MST",
    "postgres": 'SELECT "EMP_NM" FROM "EMP_MST" WHERE "EMP_NO" = 1',  # varchar = integer: no such operator
}


def _pieces(key: MaskKey) -> list[str]:
    """Every 8-character piece of every form of the key: none may show up anywhere."""
    return [form[i : i + 8].lower() for form in key.secret_texts() for i in range(0, len(form) - 7)]


def test_the_key_never_reaches_results_errors_the_log_or_the_audit(
    session: Session, sql_source: SqlSource, caplog: pytest.LogCaptureFixture
) -> None:
    key = mask_key(sql_source.settings)
    statements = [
        f"SELECT * FROM {q(sql_source, 'EMP_MST')}",
        f"SELECT * FROM {q(sql_source, 'CUST_MST')} c JOIN {q(sql_source, 'EMP_MST')} e ON 1 = 1 LIMIT 3",
        FAILING[sql_source.kind],
    ]
    with caplog.at_level(logging.DEBUG):
        outcomes = [ask(session, sql_source, sql) for sql in statements]
    assert [o.status for o in outcomes[:2]] == ["ok", "ok"], [o.error for o in outcomes]
    failed = outcomes[2]
    assert failed.status == "error", failed
    assert failed.error is not None
    if sql_source.kind == "mariadb":
        assert "near" in failed.error  # the engine's message, quoting the statement up to where the key begins
    audit = session.scalars(select(ExecutedSql).order_by(ExecutedSql.id.desc()).limit(len(statements))).all()
    seen = (
        [repr(o.rows) + repr(o.columns) + str(o.error) + str(o.sql_run) + shown_sql(o.sql, o) for o in outcomes]
        + [f"{row.sql} {row.sql_run} {row.error} {row.policies}" for row in audit]
        + [caplog.text]
    )
    everything = "\n".join(seen).lower()
    assert [piece for piece in _pieces(key) if piece in everything] == []
    for outcome in outcomes:
        assert outcome.sql_run is not None
        assert "ts_r" in outcome.sql_run


def test_without_a_usable_key_a_hash_mask_refuses_and_never_hashes_unkeyed(
    session: Session, sql_source: SqlSource, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    settings = Settings(home=home, config=sql_source.settings.config_path)  # no `init`: no key file
    hashed = f"SELECT {q(sql_source, 'EMP_NM')} FROM {q(sql_source, 'EMP_MST')}"
    filtered_only = f"SELECT count(*) FROM {q(sql_source, 'ORD_MST')}"
    with caplog.at_level(logging.ERROR):
        missing = ask(session, sql_source, hashed, settings)
    assert missing.status == "refused"
    assert missing.error is not None
    assert "mask key" in missing.error
    assert str(home) not in missing.error
    assert "there is no mask key file" in caplog.text
    assert ask(session, sql_source, filtered_only, settings).status == "ok"  # no hash mask: no key needed
    key_file = isolated_settings(home, config=sql_source.settings.config_path).home / "mask.key"
    key_file.chmod(0o644)
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        loose = ask(session, sql_source, hashed, settings)
    assert loose.status == "refused"
    assert "may be read by others (mode 0644)" in caplog.text
    key_file.chmod(0o600)
    assert ask(session, sql_source, hashed, settings).status == "ok"
    from_setting = Settings(home=home, config=sql_source.settings.config_path, mask_key=SecretStr("s" * 40))
    names = ask(session, sql_source, hashed, from_setting)
    assert names.status == "ok", names.error
    expected = MaskKey(b"s" * 40, "test").digest
    assert sorted(r[0] for r in names.rows) == sorted(expected(n.encode()) for _, _, n in d10_staff(sql_source))


def test_the_model_cannot_call_the_hash_function_itself(session: Session, sqlite_sql_source: SqlSource) -> None:
    for sql in ("SELECT ts_mask_hash('4950000')", "SELECT ts_fits('x', 0)"):
        outcome = ask(session, sqlite_sql_source, sql)
        assert outcome.status == "refused", sql
