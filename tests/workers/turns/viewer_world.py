"""The sample ERP on SQLite, MariaDB and PostgreSQL with plain views over masked and filtered tables, analysed and
indexed in one installation, for the tests of what surrounds the SQL (issue 30): a Busan sales role filters orders and
customers to the user's city and employees to their departments, masks salaries, names and e-mails, and denies the
stale copies; a billing clerk may not see invoices. The three sources are named `erp`, `erp_maria` and `erp_pg`, so
the role's `erp*` covers them all; `billing` is the sample billing database on SQLite.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text

from catalog.analysis import AnalysisOptions
from catalog.sample_erp import load_into
from core.store.embedded import EmbeddedServer
from core.store.repositories import directory
from search.encoders import BiEncoderReranker
from search.service import Encoders
from tests.catalog.analysis_support import new_installation
from tests.support import MARIADB_SERVER, POSTGRES_SERVER, default_embedder, isolated_settings, sample_databases
from tests.turn_world import TurnWorld
from workers.catalog_refresh import refresh_source

VIEWS = {
    "V_EMP_PAY": 'SELECT "EMP_NO", "DEPT_CD", "SAL_AMT" AS "PAY", "EMAIL" AS "MAILU" FROM "EMP_MST"',
    "V_CUST_CONTACT": 'SELECT "CUST_NM", "CITY_NM", "TEL_NO", "EMAIL" FROM "CUST_MST"',
    "V_ORD": 'SELECT * FROM "ORD_MST"',
}

ROLES = """\
roles:
  busan_sales:
    grants:
      - database: "erp*"
        allow: ["*"]
        deny: ["ORD_MST_*", "CUST_MST_TMP"]
        row_filters:
          ORD_MST: "SHIP_CITY = {user.city}"
          CUST_MST: "CITY_NM = {user.city}"
          EMP_MST: "DEPT_CD IN {user.departments}"
        column_masks:
          CUST_MST.TEL_NO: hide
          CUST_MST.EMAIL: hash
          EMP_MST.SAL_AMT: hash
          EMP_MST.EMP_NM: hash
          EMP_MST.EMAIL: redact
  everything:
    grants:
      - database: "*"
  billing_clerk:
    grants:
      - database: billing
        deny: ["INV_*"]
groups:
  - {platform: slack, group: S_ALL, roles: [everything]}
  - {platform: slack, group: S_BILL, roles: [billing_clerk]}
default_role: busan_sales
"""
#: U1 (the issue's user) has the default role; U_ALL sees everything; U_BILL may not see invoices.
USERS: dict[str, tuple[str | None, dict[str, str | list[str]]]] = {
    "U1": (None, {"city": "Busan", "departments": ["D10"]}),
    "U_ALL": ("S_ALL", {}),
    "U_BILL": ("S_BILL", {}),
}
SOURCES = {"sqlite": "erp", "mariadb": "erp_maria", "postgres": "erp_pg"}
ENGINES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("mariadb", id="mariadb", marks=pytest.mark.mariadb),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@dataclass
class ViewerWorld:
    world: TurnWorld
    erp: Path  # the SQLite copy of the ERP: the same rows on every engine, for expected values

    def erp_rows(self, sql: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.erp) as conn:
            return conn.execute(sql).fetchall()


def _create_views(engine: Engine, quote: str) -> None:
    with engine.begin() as conn:
        for name, body in VIEWS.items():
            conn.exec_driver_sql(f"CREATE VIEW {quote}{name}{quote} AS {body.replace(chr(34), quote)}")


def _scratch(server_url: str, create: str) -> tuple[Engine, str]:
    name = f"ts_view_{uuid.uuid4().hex[:8]}"
    server = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text(create.format(name=name)))
    return server, name


@pytest.fixture(scope="session")
def viewer_world(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewerWorld]:
    home = tmp_path_factory.mktemp("viewer-home")
    installation = new_installation(store_server, home)
    sample = sample_databases(tmp_path_factory.mktemp("viewer-sample"))
    pristine = sample_databases(tmp_path_factory.mktemp("viewer-expected"))["erp"]
    lite = create_engine(f"sqlite:///{sample['erp']}")
    _create_views(lite, '"')
    lite.dispose()
    maria_server, maria_db = _scratch(MARIADB_SERVER, "CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    pg_server, pg_db = _scratch(POSTGRES_SERVER, 'CREATE DATABASE "{name}"')
    maria_url = f"mysql+pymysql://root@127.0.0.1:3306/{maria_db}"
    pg_url = str(create_engine(POSTGRES_SERVER).url.set(database=pg_db).render_as_string(hide_password=False))
    try:
        for url, quote in ((maria_url, "`"), (pg_url, '"')):
            load_into(url, "erp")
            engine = create_engine(url)
            _create_views(engine, quote)
            engine.dispose()
        installation.add("erp", f"sqlite:///{sample['erp']}")
        installation.add("billing", f"sqlite:///{sample['billing']}")
        installation.add("erp_maria", maria_url, allow_privileged=True)  # root: a superuser
        installation.add("erp_pg", pg_url, allow_privileged=True)
        config = home / "tablescout.yaml"
        config.write_text(config.read_text() + ROLES)
        assert installation.settings.database_url is not None
        installation.settings = isolated_settings(
            home, database_url=installation.settings.database_url.get_secret_value()
        )
        embedder = default_embedder()
        for name in ("erp", "billing", "erp_maria", "erp_pg"):
            report = refresh_source(
                installation.settings, installation.store, name, AnalysisOptions(), embedder=embedder
            )
            assert report.analysis.error is None, report.analysis.error
        now = datetime.now(UTC)
        with installation.store.transaction() as session:
            for user, (group_id, attributes) in USERS.items():
                member = directory.upsert_user(
                    session, platform="slack", user_id=user, synced_at=now, attributes=attributes
                )
                if group_id is not None:
                    group = directory.upsert_group(session, platform="slack", group_id=group_id, synced_at=now)
                    directory.replace_members(session, group, [member])
        yield ViewerWorld(
            TurnWorld(installation, Encoders(embedder, BiEncoderReranker(embedder)), sample["erp"]), pristine
        )
    finally:
        installation.store.close()
        with maria_server.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS `{maria_db}`"))
        with pg_server.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{pg_db}" WITH (FORCE)'))
        maria_server.dispose()
        pg_server.dispose()
