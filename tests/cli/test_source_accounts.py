"""`source add`, `source list`, `init` and `analyze` check what a source's account may do beyond reading."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.source_accounts import mariadb_accounts, mariadb_admin, postgres_accounts
from tests.support import MARIADB_SERVER, POSTGRES_SERVER


@pytest.fixture
def initialised(cli: Cli) -> Cli:
    result = cli("init")
    assert result.returncode == 0, result.stderr
    return cli


def listed(cli: Cli) -> dict[str, dict[str, object]]:
    result = cli("source", "list", "--json")
    assert result.returncode == 0, result.stderr
    return {str(row["name"]): row for row in json.loads(result.stdout)}


def assert_refused_and_nothing_saved(cli: Cli, url: str, found: str, recipe: str) -> None:
    before = (cli.home / "tablescout.yaml").read_text()
    refused = cli("source", "add", "erp", url)
    assert refused.returncode == 1
    assert "refused: the account of source erp is a superuser" in refused.stderr
    assert found in refused.stderr
    assert recipe in refused.stderr
    assert "(docs/source-accounts.md)" in refused.stderr
    assert "--allow-privileged" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert (cli.home / "tablescout.yaml").read_text() == before
    assert listed(cli) == {}


@pytest.mark.mariadb
def test_mariadb_superuser_is_refused_unless_allowed_and_shown_with_its_privileges(initialised: Cli) -> None:
    url = MARIADB_SERVER.replace("mysql+pymysql", "mysql") + "mysql"
    assert_refused_and_nothing_saved(initialised, url, "ALL PRIVILEGES on *.*", "GRANT SELECT, SHOW VIEW ON `mysql`.*")
    added = initialised("source", "add", "erp", url, "--allow-privileged")
    assert added.returncode == 0, added.stderr
    assert "warning: the account of source erp can do more than read (superuser, file writes" in added.stderr
    privileges = listed(initialised)["erp"]["privileges"]
    assert isinstance(privileges, list)
    assert privileges[:2] == ["superuser", "file writes"]
    table = initialised("source", "list")
    assert "superuser, file writes" in table.stdout
    assert "warning: the account of source erp can do more than read (superuser" in table.stderr


@pytest.mark.mariadb
def test_mariadb_reader_and_writer_accounts(initialised: Cli) -> None:
    accounts = {
        "reader": ["GRANT SELECT, SHOW VIEW ON {db}.* TO {user}"],
        "writer": ["GRANT SELECT, INSERT ON {db}.* TO {user}"],
    }
    with mariadb_accounts(accounts) as urls:
        reader = initialised("source", "add", "ro", urls["reader"])
        assert reader.returncode == 0, reader.stderr
        assert "warning" not in reader.stderr
        writer = initialised("source", "add", "rw", urls["writer"])
        assert writer.returncode == 0, writer.stderr
        assert "can do more than read (table writes: INSERT on `ts_acct_" in writer.stderr
        rows = listed(initialised)
        assert rows["ro"]["privileges"] == []
        assert rows["rw"]["privileges"] == ["table writes"]
        table = initialised("source", "list")
        assert "read-only" in table.stdout
        assert "source rw can do more than read (table writes)" in table.stderr
        assert "source ro" not in table.stderr


@pytest.mark.mariadb
def test_analyze_checks_the_account_again(initialised: Cli) -> None:
    with mariadb_accounts({"reader": ["GRANT SELECT, SHOW VIEW ON {db}.* TO {user}"]}) as urls:
        assert initialised("source", "add", "ro", urls["reader"]).returncode == 0
        assert listed(initialised)["ro"]["privileges"] == []
        user = urls["reader"].split("//", 1)[1].split("@", 1)[0]
        database = urls["reader"].rsplit("/", 1)[1]
        mariadb_admin(f"GRANT DELETE ON `{database}`.* TO '{user}'@'%'")
        analysed = initialised("analyze", "ro", "--json")
        assert analysed.returncode == 0, analysed.stderr
        [report] = json.loads(analysed.stdout)
        assert report["privileges"] == ["table writes"]
        assert listed(initialised)["ro"]["privileges"] == ["table writes"]
        mariadb_admin(f"REVOKE DELETE ON `{database}`.* FROM '{user}'@'%'")
        again = initialised("analyze", "ro")
        assert again.returncode == 0, again.stderr
        assert "can do more than read" not in again.stderr
        assert listed(initialised)["ro"]["privileges"] == []


@pytest.mark.postgres
def test_postgres_superuser_reader_and_writer(initialised: Cli) -> None:
    url = POSTGRES_SERVER.replace("postgresql+psycopg", "postgresql")
    assert_refused_and_nothing_saved(initialised, url, "rolsuper", "GRANT SELECT ON ALL TABLES IN SCHEMA public")
    with postgres_accounts(
        {"reader": ["GRANT SELECT ON t TO {user}"], "writer": ["GRANT SELECT, INSERT ON t TO {user}"]}
    ) as urls:
        reader = initialised("source", "add", "ro", urls["reader"])
        assert reader.returncode == 0, reader.stderr
        assert "warning" not in reader.stderr
        writer = initialised("source", "add", "rw", urls["writer"])
        assert writer.returncode == 0, writer.stderr
        assert "can do more than read (table writes: INSERT on public.t)" in writer.stderr
        allowed = initialised("source", "add", "admin", url, "--allow-privileged")
        assert allowed.returncode == 0, allowed.stderr
        rows = listed(initialised)
        assert rows["ro"]["privileges"] == []
        assert rows["rw"]["privileges"] == ["table writes"]
        admin = rows["admin"]["privileges"]
        assert isinstance(admin, list)
        assert admin[0] == "superuser"
        assert "server programs" in admin


@pytest.mark.postgres
def test_init_does_not_register_a_hand_written_superuser_source(cli: Cli) -> None:
    url = POSTGRES_SERVER.replace("postgresql+psycopg", "postgresql")
    (cli.home / "tablescout.yaml").write_text(f"sources:\n  pg:\n    url: {url}\n")
    result = cli("init")
    assert result.returncode == 1
    assert "source pg from the configuration file was not registered" in result.stderr
    assert "is a superuser (rolsuper)" in result.stderr
    assert "tablescout source add pg URL --allow-privileged" in result.stderr
    assert not listed(cli)["pg"]["registered"]


def test_sqlite_file_writable_by_this_user_is_a_warning_only(initialised: Cli, tmp_path: Path) -> None:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    added = initialised("source", "add", "shop", f"sqlite:///{path}")
    assert added.returncode == 0, added.stderr
    assert f"warning: source shop: the file {path} is writable by this OS user" in added.stderr
    assert listed(initialised)["shop"]["privileges"] == ["writable file"]
    table = initialised("source", "list")
    assert "writable file" in table.stdout
