from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from catalog.sample_erp import content_digest
from tests.cli.conftest import Cli
from tests.support import MARIADB_SERVER


def test_build_and_register(cli: Cli) -> None:
    assert cli("init").returncode == 0
    built = cli("sample", "build", "--register")
    assert built.returncode == 0, built.stderr
    sources = {s["name"]: s for s in json.loads(cli("source", "list", "--json").stdout)}
    assert set(sources) == {"erp", "billing"}
    assert sources["erp"]["engine"] == "sqlite"
    erp = cli.home / "sample" / "erp.sqlite"
    first = content_digest(f"sqlite:///{erp}", "erp")
    again = cli("sample", "build", "--register")
    assert again.returncode == 0, again.stderr
    assert "already registered" in again.stdout
    assert content_digest(f"sqlite:///{erp}", "erp") == first


def test_build_and_register_on_a_fresh_home_initialises_first(fresh_cli: Cli) -> None:
    cli = fresh_cli
    built = cli("sample", "build", "--register")
    assert built.returncode == 0, built.stderr
    assert "initialising it first" in built.stdout
    assert built.stdout.index("Metadata store:") < built.stdout.index("Wrote erp")
    assert "Registered source erp" in built.stdout
    sources = {s["name"]: s for s in json.loads(cli("source", "list", "--json").stdout)}
    assert set(sources) == {"erp", "billing"}
    assert all(s["registered"] and s["in_config"] for s in sources.values())


@pytest.fixture
def mariadb_database() -> Iterator[str]:
    name = f"ts_cli_{uuid.uuid4().hex[:10]}"
    server = create_engine(MARIADB_SERVER)
    with server.begin() as conn:
        conn.execute(text(f"CREATE DATABASE `{name}`"))
    yield name
    with server.begin() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
    server.dispose()


@pytest.mark.mariadb
def test_load_into_mariadb_and_register_it(cli: Cli, mariadb_database: str) -> None:
    assert cli("init").returncode == 0
    url = f"mysql://root@127.0.0.1:3306/{mariadb_database}"
    loaded = cli("sample", "load", "billing", url)
    assert loaded.returncode == 0, loaded.stderr
    added = cli("source", "add", "billing", url, "--allow-privileged")
    assert added.returncode == 0, added.stderr
    assert "mariadb" in added.stdout


def test_load_refuses_unknown_names_and_sqlite(cli: Cli) -> None:
    unknown = cli("sample", "load", "crm", "mysql://root@127.0.0.1/x")
    assert unknown.returncode == 1
    assert "unknown sample database 'crm'" in unknown.stderr
    sqlite = cli("sample", "load", "erp", "sqlite:////tmp/x.sqlite")
    assert sqlite.returncode == 1
    assert "sample build" in sqlite.stderr


@pytest.mark.mariadb
def test_load_into_missing_database_says_why(cli: Cli) -> None:
    result = cli("sample", "load", "erp", "mysql://root@127.0.0.1:3306/ts_no_such_database")
    assert result.returncode == 1
    assert "Unknown database 'ts_no_such_database'" in result.stderr
    assert "Traceback" not in result.stderr
