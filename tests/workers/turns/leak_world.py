"""Canary sources for permission-leak tests: one per engine (SQLite, PostgreSQL, MariaDB), each with a denied
employee table holding planted secrets, an allowed order table whose EMP_NO codes take their meanings from it, a
staging copy of the denied table, views over it (a PostgreSQL `rpt.ORD_MST` among them), analysed and indexed."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from catalog.analysis import AnalysisOptions
from core.store.embedded import EmbeddedServer
from core.store.repositories import directory
from search.encoders import BiEncoderReranker
from search.service import Encoders
from tests.catalog.analysis_support import new_installation
from tests.support import MARIADB_SERVER, POSTGRES_SERVER, default_embedder, isolated_settings
from tests.turn_world import TurnWorld
from workers.catalog_refresh import refresh_source

SECRET = "CANARY-SECRET-7731"
SALARY = 9876543
EMPLOYEE = "Jung Eun-ji"
ENGINES = ("sqlite", "postgres", "mariadb")

EMPLOYEES = [
    ("2021001", "Kim Min-su", SALARY - 1),
    ("2021002", EMPLOYEE, SALARY),
    ("2021003", "Park Ji-ho", SALARY + 1),
]

ROLES = """\
roles:
  staff:
    grants:
      - database: "*"
        deny: ["EMP_*"]
  orders_only:
    grants:
      - database: "*"
        allow: ["ORD_MST"]
  everything:
    grants:
      - database: "*"
groups:
  - {platform: slack, group: S_STAFF, roles: [staff]}
  - {platform: slack, group: S_ORD, roles: [orders_only]}
  - {platform: slack, group: S_ALL, roles: [everything]}
default_role: staff
"""
USERS = {"U_STAFF": "S_STAFF", "U_ORD": "S_ORD", "U_ALL": "S_ALL"}


def _statements(q: str, rpt: bool) -> list[str]:
    """DDL and rows; `q` quotes identifiers (PostgreSQL keeps upper-case names only when quoted)."""

    def n(name: str) -> str:
        return f"{q}{name}{q}"

    emp_columns = f"{n('EMP_NO')} VARCHAR(8) PRIMARY KEY, {n('EMP_NM')} VARCHAR(50), {n('SAL_AMT')} INTEGER"
    emp_columns += f", {n('SECRET_TXT')} VARCHAR(40)"
    statements = [
        f"CREATE TABLE {n('EMP_MST')} ({emp_columns})",
        f"CREATE TABLE {n('EMP_MST_TMP')} ({emp_columns})",
        f"CREATE TABLE {n('ORD_MST')} ({n('ORD_NO')} VARCHAR(20) PRIMARY KEY, {n('EMP_NO')} VARCHAR(8), "
        f"{n('ORD_AMT')} INTEGER, {n('STATUS_CODE')} VARCHAR(2))",
    ]
    for emp_no, name, salary in EMPLOYEES:
        statements.append(f"INSERT INTO {n('EMP_MST')} VALUES ('{emp_no}', '{name}', {salary}, '{SECRET}')")
    for emp_no, name, salary in EMPLOYEES[:2]:
        statements.append(f"INSERT INTO {n('EMP_MST_TMP')} VALUES ('{emp_no}', '{name}', {salary}, '{SECRET}')")
    for i in range(60):
        emp_no = EMPLOYEES[i % 3][0]
        statements.append(
            f"INSERT INTO {n('ORD_MST')} VALUES ('O{i:04d}', '{emp_no}', {1000 + i}, '{('10', '20')[i % 2]}')"
        )
    statements.append(
        f"CREATE VIEW {n('ORD_EMP_V')} AS SELECT o.{n('ORD_NO')}, e.{n('EMP_NM')}, e.{n('SAL_AMT')}, "
        f"e.{n('SECRET_TXT')} FROM {n('ORD_MST')} o JOIN {n('EMP_MST')} e ON e.{n('EMP_NO')} = o.{n('EMP_NO')}"
    )
    statements.append(f"CREATE VIEW {n('PAY_V')} AS SELECT * FROM {n('ORD_EMP_V')}")
    if rpt:
        statements.append("CREATE SCHEMA rpt")
        statements.append(
            f"CREATE VIEW rpt.{n('ORD_MST')} AS SELECT {n('EMP_NO')}, {n('EMP_NM')}, {n('SAL_AMT')}, "
            f"{n('SECRET_TXT')} FROM public.{n('EMP_MST')}"
        )
    return statements


@dataclass
class LeakWorld:
    world: TurnWorld
    databases: dict[str, str]  # engine → source name


def _sqlite(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        for statement in _statements('"', rpt=False):
            conn.execute(statement)
    return f"sqlite:///{path}"


@pytest.fixture(scope="session")
def leak_world(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeakWorld]:
    name = f"ts_leak_{uuid.uuid4().hex[:8]}"
    pg_server = create_engine(POSTGRES_SERVER, isolation_level="AUTOCOMMIT")
    maria_server = create_engine(MARIADB_SERVER)
    with pg_server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    with maria_server.begin() as conn:
        conn.execute(text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
    pg_url = POSTGRES_SERVER.rsplit("/", 1)[0] + f"/{name}"
    maria_url = f"mysql+pymysql://root@127.0.0.1:3306/{name}"
    pg = create_engine(pg_url)
    with pg.begin() as conn:
        for statement in _statements('"', rpt=True):
            conn.execute(text(statement))
    pg.dispose()
    maria = create_engine(maria_url)
    with maria.begin() as conn:
        for statement in _statements("`", rpt=False):
            conn.execute(text(statement))
    maria.dispose()
    home = tmp_path_factory.mktemp("leak-home")
    installation = new_installation(store_server, home)
    urls = {
        "sqlite": _sqlite(tmp_path_factory.mktemp("leak-sqlite") / "canary.sqlite"),
        "postgres": pg_url,
        "mariadb": maria_url,
    }
    databases = {engine: f"canary_{engine}" for engine in ENGINES}
    for engine in ENGINES:
        installation.add(databases[engine], urls[engine], allow_privileged=engine != "sqlite")
    config = home / "tablescout.yaml"
    config.write_text(config.read_text() + ROLES)
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    embedder = default_embedder()
    for source in databases.values():
        report = refresh_source(installation.settings, installation.store, source, AnalysisOptions(), embedder=embedder)
        assert report.analysis.error is None
    now = datetime.now(UTC)
    with installation.store.transaction() as session:
        for user, group_id in USERS.items():
            member = directory.upsert_user(session, platform="slack", user_id=user, synced_at=now)
            group = directory.upsert_group(session, platform="slack", group_id=group_id, synced_at=now)
            directory.replace_members(session, group, [member])
    yield LeakWorld(TurnWorld(installation, Encoders(embedder, BiEncoderReranker(embedder)), Path()), databases)
    installation.store.close()
    with pg_server.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    with maria_server.begin() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
    pg_server.dispose()
    maria_server.dispose()
