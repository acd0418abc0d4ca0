"""Quietly wrong results and temporary space (issue 30 item 10): an engine limit that would cut a result fails the
statement with a message that says so; a row filter admits the same rows on every engine (exact text comparison,
numbers and dates as numbers and dates); a row identifier on a filtered table is refused, not silently NULL; and
the temporary space a query may make MariaDB or SQLite use is capped, with a clear error."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from sqlalchemy.orm import Session

from core.access.permissions import Principal, RoleGrants
from core.config.file import Grant
from tests.support import REPO
from tests.workers.sql.conftest import SqlSource
from workers.sql import SqlLimits, SqlOutcome, run_sql

EVERYONE = Principal(platform="slack", user_id="U_ANY", roles=(RoleGrants("all", (Grant(database="*"),)),))


def filtered(*filters: tuple[str, str], **attributes: str | tuple[str, ...]) -> Principal:
    grant = Grant(database="*", row_filters=dict(filters))
    return Principal(platform="slack", user_id="U1", roles=(RoleGrants("f", (grant,)),), attributes=attributes)


BUSAN = filtered(("ORD_MST", "SHIP_CITY = {user.city}"), city="Busan")


def ask(
    session: Session, source: SqlSource, sql: str, who: Principal = EVERYONE, limits: SqlLimits | None = None
) -> SqlOutcome:
    source.register(session)
    return run_sql(session, source.settings, who, source.name, sql, limits=limits or SqlLimits())


def q(source: SqlSource, name: str) -> str:
    return f'"{name}"' if source.kind == "postgres" else name


# --- limits that would cut a result ---------------------------------------------------------------------------------


def test_a_recursive_cte_runs_to_its_end(session: Session, sql_source: SqlSource) -> None:
    """MariaDB stopped it at max_recursive_iterations (1000) and counted 1001 rows, without an error."""
    outcome = ask(
        session,
        sql_source,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT count(*) FROM c",
    )
    assert outcome.status == "ok", outcome.error
    assert int(outcome.rows[0][0]) == 100000


@pytest.mark.mariadb
def test_a_recursive_cte_past_the_temporary_space_fails_clearly_on_mariadb(
    session: Session, mariadb_sql_source: SqlSource
) -> None:
    outcome = ask(
        session,
        mariadb_sql_source,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000) SELECT count(*) FROM c",
        limits=SqlLimits(temp_bytes=4 * 1024 * 1024, timeout_s=20),
    )
    assert outcome.status == "error", outcome.rows
    assert outcome.error is not None
    assert "needs more temporary space than the 4 MiB it may use" in outcome.error


@pytest.mark.mariadb
def test_values_mariadb_would_cut_fail_instead_of_reading_null(session: Session, mariadb_sql_source: SqlSource) -> None:
    repeat = ask(session, mariadb_sql_source, "SELECT length(REPEAT('x', 20000000)) AS n")
    assert repeat.status == "error", repeat.rows
    assert repeat.error is not None
    assert "would be incomplete" in repeat.error
    assert "came back as NULL" in repeat.error
    concat = ask(session, mariadb_sql_source, "SELECT length(GROUP_CONCAT(REPEAT('x', 1000))) FROM seq_1_to_9000")
    assert concat.status == "error", concat.rows
    assert concat.error is not None
    assert "GROUP_CONCAT was cut" in concat.error
    fits = ask(session, mariadb_sql_source, "SELECT length(GROUP_CONCAT(REPEAT('x', 1000))) FROM seq_1_to_2000")
    assert fits.status == "ok", fits.error
    assert fits.rows == [(2000 * 1000 + 1999,)]  # past MariaDB's default of 1 MiB, within the session's 8 MB


def test_sqlite_printf_past_the_length_limit_fails_instead_of_reading_null(
    session: Session, sqlite_sql_source: SqlSource
) -> None:
    for sql in ("SELECT printf('%.*c', 9000000, 'x') IS NULL", "SELECT length(format('%9000000d', 1))"):
        outcome = ask(session, sqlite_sql_source, sql)
        assert outcome.status == "error", (sql, outcome.rows)
        assert outcome.error is not None
        assert "printf() or format() would build a text longer" in outcome.error
    fine = ask(
        session,
        sqlite_sql_source,
        "SELECT printf('%05d', 42), format('%s-%s', 'a', printf('%d', 7)), printf(NULL) IS NULL, "
        'printf(\'%.2f\', max("TOT_AMT")) FROM "ORD_MST"',
    )
    assert fine.status == "ok", fine.error
    assert fine.rows[0][:3] == ("00042", "a-7", 1)
    assert fine.sql_run is not None
    assert "TS_FITS" in fine.sql_run.upper()
    assert fine.sql.startswith("SELECT printf('%05d', 42)")  # what the model and the audit see is its own SQL


# --- row filters -----------------------------------------------------------------------------------------------------


def test_rowid_and_friends_on_a_filtered_table_are_refused(session: Session, sql_source: SqlSource) -> None:
    names = {"sqlite": ["rowid", "oid", "_rowid_"], "mariadb": ["_rowid"], "postgres": ["ctid", "xmin", "tableoid"]}
    o = q(sql_source, "ORD_MST")
    for name in names[sql_source.kind]:
        for sql in (f"SELECT count(*) FROM {o} WHERE {name} > 0", f"SELECT o.{name} FROM {o} o LIMIT 1"):
            outcome = ask(session, sql_source, sql, BUSAN)
            assert outcome.status == "refused", (sql, outcome.rows)
            assert outcome.error is not None
            assert f"{name} cannot be read from ORD_MST, which is filtered or masked for you" in outcome.error
    if sql_source.kind == "sqlite":  # on a table nothing applies to, rowid is the engine's as always
        plain = ask(session, sql_source, 'SELECT count(*) FROM "PRD_MST" WHERE rowid > 0', BUSAN)
        assert plain.status == "ok", plain.error
        assert int(plain.rows[0][0]) > 0


@pytest.mark.mariadb
@pytest.mark.postgres
def test_a_row_filter_admits_the_same_rows_on_every_engine(
    session: Session, sqlite_sql_source: SqlSource, mariadb_sql_source: SqlSource, postgres_sql_source: SqlSource
) -> None:
    """The filter SHIP_CITY = 'Busan' admitted 1,655 rows on MariaDB ('BUSAN' and 'Busan ' too) and 1,507 elsewhere."""
    sources = (sqlite_sql_source, mariadb_sql_source, postgres_sql_source)
    users = {
        "attribute": BUSAN,
        "literal": filtered(("ORD_MST", "SHIP_CITY = 'Busan'")),
        "list": filtered(("ORD_MST", "SHIP_CITY IN {user.cities}"), cities=("Busan", "Seoul")),
        "not equal": filtered(("ORD_MST", "SHIP_CITY <> 'Busan'")),
        "like": filtered(("ORD_MST", "SHIP_CITY LIKE 'Bus%'")),
        "number": filtered(("ORD_MST", "TOT_AMT >= 1000000")),
        "number as text": filtered(("ORD_MST", "TOT_AMT = {user.amount}"), amount="3600"),
        "date": filtered(("ORD_MST", "ORD_DT >= '2024-01-01' AND SHIP_CITY = 'Busan'")),
    }
    counts: dict[str, list[int]] = {}
    for label, user in users.items():
        counts[label] = []
        for source in sources:
            outcome = ask(session, source, f"SELECT count(*) FROM {q(source, 'ORD_MST')}", user)
            assert outcome.status == "ok", (label, source.kind, outcome.error)
            counts[label].append(int(outcome.rows[0][0]))
    assert {label: len(set(found)) for label, found in counts.items()} == dict.fromkeys(users, 1), counts
    assert counts["attribute"][0] == 1507
    assert counts["number as text"][0] > 0
    everything = ask(session, mariadb_sql_source, "SELECT count(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan'")
    assert int(everything.rows[0][0]) == 1655  # the collation's own answer, for SQL the user writes


# --- temporary space -------------------------------------------------------------------------------------------------


@pytest.mark.mariadb
def test_mariadb_temporary_space_and_huge_joins_are_capped(session: Session, mariadb_sql_source: SqlSource) -> None:
    small = SqlLimits(temp_bytes=2 * 1024 * 1024, timeout_s=20)
    distinct = ask(
        session,
        mariadb_sql_source,
        "SELECT count(*) FROM (SELECT DISTINCT a.seq * 100000 + b.seq AS v FROM seq_1_to_3000 a, seq_1_to_3000 b) t",
        limits=small,
    )
    assert distinct.status == "error", distinct.rows
    assert distinct.error is not None
    assert "needs more temporary space than the 2 MiB" in distinct.error
    cross = ask(session, mariadb_sql_source, "SELECT count(*) FROM seq_1_to_1000000 a, seq_1_to_1000000 b")
    assert cross.status == "error", cross.rows
    assert cross.error is not None
    assert "would examine more than 10,000,000,000 rows" in cross.error
    assert "SET" not in cross.error  # not the server's advice to raise the limit


def test_sqlite_temporary_data_is_kept_in_capped_memory(sqlite_sql_source: SqlSource) -> None:
    """In a process of its own, since SQLite's heap limit is the process's: a sort past it fails with a message."""
    script = textwrap.dedent(
        f"""
        from sqlalchemy import make_url
        import workers.sql.engines as engines
        from workers.sql.engines import create_source_engine
        from workers.sql.limits import SqlLimits
        from workers.sql.readonly import ExecutionError, execute_read_only

        engines.SQLITE_HEAP_LIMIT = 24 * 1024 * 1024
        engine = create_source_engine(make_url({str(sqlite_sql_source.url)!r}))
        sort = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) "
                "SELECT x FROM (SELECT x, hex(randomblob(40)) AS h FROM c ORDER BY h) LIMIT 1")
        try:
            execute_read_only(engine, sort, SqlLimits())
        except ExecutionError as exc:
            print("FAILED:", exc)
        print("AFTER:", execute_read_only(engine, 'SELECT count(*) FROM "ORD_MST"', SqlLimits()).rows)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "FAILED: the query needs more memory than SQLite queries may use together" in done.stdout, done.stdout
    assert "AFTER: [(20000,)]" in done.stdout  # the connection is usable afterwards
