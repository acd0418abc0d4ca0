"""Sources for the SQL tests: the sample ERP on SQLite, MariaDB and PostgreSQL, with views for permission checks.

The server databases are scratch copies created once per test session and dropped at its end. MariaDB on
127.0.0.1:3306 and PostgreSQL on 127.0.0.1:5432 must be running; a server that is down fails the tests.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import URL, Engine, create_engine, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from catalog.sample_erp import load_into
from core.access.permissions import Principal, RoleGrants
from core.config.file import Grant
from core.config.settings import Settings
from core.store.models import Source
from core.store.repositories import sources as source_repo
from tests.support import MARIADB_SERVER, POSTGRES_SERVER, isolated_settings, sample_databases
from workers.sql import dispose_engines

ENGINES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("mariadb", id="mariadb", marks=pytest.mark.mariadb),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]

#: Views over an allowed table, over the denied EMP_MST, and over that view.
VIEWS = {
    "V_ORDERS": 'SELECT "ORD_NO", "TOT_AMT" FROM "ORD_MST"',
    "V_STAFF": 'SELECT "EMP_NO", "SAL_AMT" FROM "EMP_MST"',
    "V_STAFF_OUTER": 'SELECT "EMP_NO" FROM "V_STAFF"',
}

STAFF = Principal(
    platform="slack",
    user_id="U_STAFF",
    roles=(RoleGrants(name="staff", grants=(Grant(database="*", deny=["EMP_MST"]),)),),
)
NOBODY = Principal(platform="slack", user_id="U_NOBODY", roles=())


@dataclass
class SqlSource:
    kind: str  # "sqlite", "mariadb" or "postgres"
    name: str  # the source's name in the configuration and the store
    engine_name: str  # Source.engine
    url: URL
    admin: Engine  # read-write, for setting up and checking; never what run_sql uses
    settings: Settings
    schema: str  # how the default schema is written in a qualified name
    big_sql: str  # ten million rows, allowed by the guard
    slow_sql: str  # runs for minutes, allowed by the guard
    sleep_sql: str  # a sleep the guard refuses (for the executor alone)

    def register(self, session: Session) -> Source:
        found = source_repo.by_name(session, self.name)
        if found is not None:
            return found
        return source_repo.add(session, Source(name=self.name, engine=self.engine_name, url_ref=self.name))


def _settings(home: Path, name: str, url: URL) -> Settings:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "tablescout.yaml"
    config.write_text(f"sources:\n  {name}:\n    url: '{url.render_as_string(hide_password=False)}'\n")
    return isolated_settings(home)


def _create_views(admin: Engine, kind: str) -> None:
    with admin.begin() as conn:
        for name, body in VIEWS.items():
            if kind == "mariadb":
                body = body.replace('"', "`")
                conn.exec_driver_sql(f"CREATE VIEW `{name}` AS {body}")
            else:
                conn.exec_driver_sql(f'CREATE VIEW "{name}" AS {body}')


@pytest.fixture(scope="session", autouse=True)
def _dispose_engines() -> Iterator[None]:
    yield
    dispose_engines()


@pytest.fixture(scope="session")
def sqlite_sql_source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlSource]:
    directory = tmp_path_factory.mktemp("sql_sqlite")
    path = sample_databases(directory)["erp"]
    url = URL.create("sqlite", database=str(path))
    admin = create_engine(url)
    _create_views(admin, "sqlite")
    yield SqlSource(
        kind="sqlite",
        name="erp_sqlite",
        engine_name="sqlite",
        url=url,
        admin=admin,
        settings=_settings(directory / "home", "erp_sqlite", url),
        schema="main",
        big_sql="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT x FROM c",
        slow_sql="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000000)"
        " SELECT count(*) FROM c",
        sleep_sql="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c",
    )
    admin.dispose()


def _server_source(
    tmp_path_factory: pytest.TempPathFactory, kind: str, server_url: str, create: str, drop: str
) -> Iterator[tuple[URL, Engine, str, Path]]:
    database = f"ts_sql_{secrets.token_hex(5)}"
    server = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with server.connect() as conn:
            conn.exec_driver_sql(create.format(name=database))
    except OperationalError as exc:
        server.dispose()
        pytest.fail(f"cannot reach the database server at {server_url} (CI must start it): {exc}")
    url = make_url(server_url).set(database=database)
    admin = create_engine(url)
    try:
        load_into(url, "erp")
        _create_views(admin, kind)
        yield url, admin, database, tmp_path_factory.mktemp(f"sql_{kind}")
    finally:
        admin.dispose()
        dispose_engines()
        with server.connect() as conn:
            conn.exec_driver_sql(drop.format(name=database))
        server.dispose()


@pytest.fixture(scope="session")
def mariadb_sql_source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlSource]:
    for url, admin, database, home in _server_source(
        tmp_path_factory,
        "mariadb",
        MARIADB_SERVER,
        "CREATE DATABASE `{name}` CHARACTER SET utf8mb4",
        "DROP DATABASE IF EXISTS `{name}`",
    ):
        yield SqlSource(
            kind="mariadb",
            name="erp_maria",
            engine_name="mariadb",
            url=url,
            admin=admin,
            settings=_settings(home, "erp_maria", url),
            schema=database,
            big_sql="SELECT seq FROM seq_1_to_10000000",
            # 5e9 row combinations: within max_join_size (SqlLimits.max_examined_rows), and minutes of work
            slow_sql="SELECT count(*) FROM seq_1_to_100000 a, seq_1_to_50000 b WHERE a.seq <> b.seq",
            sleep_sql="SELECT SLEEP(120)",
        )


@pytest.fixture(scope="session")
def postgres_sql_source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlSource]:
    for url, admin, _database, home in _server_source(
        tmp_path_factory,
        "postgres",
        POSTGRES_SERVER,
        'CREATE DATABASE "{name}"',
        'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
    ):
        yield SqlSource(
            kind="postgres",
            name="erp_pg",
            engine_name="postgresql",
            url=url,
            admin=admin,
            settings=_settings(home, "erp_pg", url),
            schema="public",
            big_sql="SELECT g FROM generate_series(1, 10000000) AS g",
            slow_sql="SELECT count(*) FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b",
            sleep_sql="SELECT pg_sleep(120)",
        )


@pytest.fixture(scope="session", params=ENGINES)
def sql_source(request: pytest.FixtureRequest) -> SqlSource:
    found: SqlSource = request.getfixturevalue(f"{request.param}_sql_source")
    return found


def scratch_source(tmp_path_factory: pytest.TempPathFactory, kind: str, name: str) -> Iterator[SqlSource]:
    """A private copy of the sample ERP (with the views above) on engine `kind`, for tests that change its rows."""
    if kind == "sqlite":
        directory = tmp_path_factory.mktemp(f"{name}_sqlite")
        url = URL.create("sqlite", database=str(sample_databases(directory)["erp"]))
        admin = create_engine(url)
        _create_views(admin, "sqlite")
        try:
            yield SqlSource(
                "sqlite", name, "sqlite", url, admin, _settings(directory / "home", name, url), "main", "", "", ""
            )
        finally:
            admin.dispose()
        return
    if kind == "mariadb":
        server, create, drop = (
            MARIADB_SERVER,
            "CREATE DATABASE `{name}` CHARACTER SET utf8mb4",
            "DROP DATABASE IF EXISTS `{name}`",
        )
    else:
        server, create, drop = (
            POSTGRES_SERVER,
            'CREATE DATABASE "{name}"',
            'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
        )
    for url, admin, database, home in _server_source(tmp_path_factory, kind, server, create, drop):
        engine_name = "mariadb" if kind == "mariadb" else "postgresql"
        schema = database if kind == "mariadb" else "public"
        yield SqlSource(kind, name, engine_name, url, admin, _settings(home, name, url), schema, "", "", "")
