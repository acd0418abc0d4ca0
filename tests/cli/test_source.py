from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.support import SPIDER


@pytest.fixture
def initialised(cli: Cli) -> Cli:
    result = cli("init")
    assert result.returncode == 0, result.stderr
    return cli


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    path = tmp_path / "concert singer.sqlite"
    shutil.copy(SPIDER / "concert_singer" / "concert_singer.sqlite", path)
    return path


def listed(cli: Cli) -> list[dict[str, object]]:
    result = cli("source", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


def test_add_list_remove(initialised: Cli, sqlite_db: Path) -> None:
    added = initialised("source", "add", "erp", f"sqlite:///{sqlite_db}", "--alias", "orders")
    assert added.returncode == 0, added.stderr
    assert "sqlite 3." in added.stdout
    [row] = listed(initialised)
    assert row["name"] == "erp"
    assert row["aliases"] == ["orders"]
    assert row["engine"] == "sqlite"
    assert row["registered"]
    assert row["in_config"]
    assert str(sqlite_db) in (initialised.home / "tablescout.yaml").read_text()
    table = initialised("source", "list")
    assert "erp" in table.stdout
    assert "orders" in table.stdout
    removed = initialised("source", "remove", "erp")
    assert removed.returncode == 0, removed.stderr
    assert listed(initialised) == []
    assert "erp" not in (initialised.home / "tablescout.yaml").read_text().split("sources:")[-1]


def test_duplicate_names_and_aliases_are_refused(initialised: Cli, sqlite_db: Path) -> None:
    url = f"sqlite:///{sqlite_db}"
    assert initialised("source", "add", "erp", url, "--alias", "orders").returncode == 0
    before = (initialised.home / "tablescout.yaml").read_text()
    for args, message in [
        (("erp", url), "'erp' is already a source"),
        (("ERP", url), "'ERP' is already a source"),
        (("orders", url), "'orders' is already an alias of source 'erp'"),
        (("crm", url, "--alias", "erp"), "'erp' is already a source"),
        (("crm", url, "--alias", "crm"), "must all differ"),
    ]:
        result = initialised("source", "add", *args)
        assert result.returncode == 1, args
        assert message in result.stderr, result.stderr
    assert (initialised.home / "tablescout.yaml").read_text() == before
    assert len(listed(initialised)) == 1


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("nonsense", "is not a database URL"),
        ("sqlite:///:memory:", "in-memory SQLite database cannot be a source"),
        ("sqlite:////nowhere/erp.sqlite", "does not exist"),
        ("oracle+nodriver://u@h/db", "unsupported database URL scheme"),
        ("mysql://root@127.0.0.1:1/erp", "cannot connect to mysql+pymysql://root@127.0.0.1:1/erp"),
        ("postgresql://postgres@127.0.0.1:5432/no_such_db_x", 'database "no_such_db_x" does not exist'),
        ("mysql://reader:hunter2@127.0.0.1/erp", "password in clear text"),
        ("postgresql://u@127.0.0.1/x?password=hunter2", "query parameter password in clear text"),
        ("mysql://reader:${TS_TEST_UNSET_PASSWORD}@127.0.0.1/erp", "${TS_TEST_UNSET_PASSWORD}, which is not set"),
        ("postgresql://u@db.internal:notaport/erp", "host or port cannot be read"),
        ("postgresql://u@[::1/erp", "host or port cannot be read"),
        ("sqlite:////etc/hostname", "is not an SQLite database file"),
    ],
)
def test_bad_urls_are_refused_and_nothing_is_saved(initialised: Cli, url: str, message: str) -> None:
    before = (initialised.home / "tablescout.yaml").read_text()
    result = initialised("source", "add", "erp", url)
    assert result.returncode == 1
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert "hunter2" not in result.stderr + result.stdout
    assert (initialised.home / "tablescout.yaml").read_text() == before
    assert listed(initialised) == []


def test_bad_names(initialised: Cli, sqlite_db: Path) -> None:
    result = initialised("source", "add", "my erp", f"sqlite:///{sqlite_db}")
    assert result.returncode == 1
    assert "must start with a letter" in result.stderr


@pytest.mark.mariadb
def test_mariadb_source_with_password_from_environment(initialised: Cli) -> None:
    url = "mysql://root:${TS_TEST_DB_PASSWORD}@127.0.0.1:3306/mysql"
    result = initialised("source", "add", "m", url, "--allow-privileged", env={"TS_TEST_DB_PASSWORD": ""})
    assert result.returncode == 0, result.stderr
    assert "mariadb 10." in result.stdout
    [row] = listed(initialised)
    assert row["engine"] == "mariadb"
    assert row["url"] == "mysql+pymysql://root:${TS_TEST_DB_PASSWORD}@127.0.0.1:3306/mysql"
    assert "${TS_TEST_DB_PASSWORD}" in (initialised.home / "tablescout.yaml").read_text()


@pytest.mark.postgres
def test_postgres_source(initialised: Cli) -> None:
    result = initialised("source", "add", "pg", "postgresql://postgres@127.0.0.1:5432/postgres", "--allow-privileged")
    assert result.returncode == 0, result.stderr
    [row] = listed(initialised)
    assert row["engine"] == "postgresql"
    assert str(row["engine_version"]).startswith("15")


def test_hand_written_sources_are_registered_by_init(cli: Cli, sqlite_db: Path) -> None:
    (cli.home / "tablescout.yaml").write_text(
        f"sources:\n  erp:\n    url: sqlite:///{sqlite_db}\n  lost:\n    url: sqlite:////nowhere/lost.sqlite\n"
    )
    result = cli("init")
    assert result.returncode == 1, "a configured source that cannot be reached is reported"
    assert "Registered source erp" in result.stdout
    assert "source lost from the configuration file was not registered" in result.stderr
    rows = {r["name"]: r for r in listed(cli)}
    assert rows["erp"]["registered"]
    assert not rows["lost"]["registered"]


def test_remove_unknown_source(initialised: Cli) -> None:
    result = initialised("source", "remove", "ghost")
    assert result.returncode == 1
    assert "there is no source named 'ghost'" in result.stderr


def test_help_shows_only_working_commands(cli: Cli) -> None:
    result = cli("--help")
    assert result.returncode == 0
    working = ("init", "source", "sample", "analyze", "card", "search", "ask", "chat", "demo", "note", "worker")
    for command in (*working, "directory", "serve", "health", "model"):
        assert f" {command} " in result.stdout
