"""What catalog.probe finds a source's account may do beyond reading, on the real servers and SQLite files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from catalog import source_url
from catalog.account_mysql import parse_grant
from catalog.probe import probe
from tests.source_accounts import mariadb_accounts, postgres_accounts
from tests.support import MARIADB_SERVER, POSTGRES_SERVER


def capabilities(url: str) -> tuple[str, ...] | None:
    return probe(source_url.parse(url), url).account.capabilities


def test_grant_lines_parse_with_quoted_names_and_column_lists() -> None:
    line = parse_grant("GRANT INSERT (`b, c`, `a`), UPDATE (`a`) ON `ts on x`.`t to` TO `u`@`%` WITH GRANT OPTION")
    assert line is not None
    assert line.privileges == ("INSERT", "UPDATE")
    assert line.target == "`ts on x`.`t to`"
    assert line.grant_option
    role = parse_grant("GRANT `reporting` TO `u`@`%`")
    assert role is not None
    assert role.target is None


@pytest.mark.mariadb
def test_mariadb_accounts() -> None:
    accounts = {
        "reader": ["GRANT SELECT, SHOW VIEW ON {db}.* TO {user}"],
        "writer": ["GRANT SELECT ON {db}.* TO {user}", "GRANT INSERT ON {db}.T TO {user}"],
        "filer": [
            "GRANT SELECT ON {db}.* TO {user}",
            "CREATE ROLE ts_files_{suffix}",
            "GRANT FILE ON *.* TO ts_files_{suffix}",
            "GRANT ts_files_{suffix} TO {user}",
        ],
        "owner": ["GRANT ALL PRIVILEGES ON {db}.* TO {user}"],
    }
    with mariadb_accounts(accounts) as urls:
        assert capabilities(urls["reader"]) == ()
        assert capabilities(urls["writer"]) == ("table writes",)
        # FILE reached through a role the account may enable; the server leaves secure_file_priv unset.
        assert capabilities(urls["filer"]) == ("file writes",)
        assert capabilities(urls["owner"]) == ("table writes", "schema changes")
    root = probe(source_url.parse(MARIADB_SERVER + "mysql"), "root").account
    assert root.superuser
    assert root.capabilities is not None
    assert "file writes" in root.capabilities
    assert "ALL PRIVILEGES on *.*" in root.findings("superuser")


@pytest.mark.postgres
def test_postgres_roles() -> None:
    accounts = {
        "reader": ["GRANT SELECT ON t TO {user}"],
        "writer": ["GRANT SELECT, INSERT ON t TO {user}"],
        "filer": ["GRANT SELECT ON t TO {user}", "GRANT pg_write_server_files TO {user}"],
        "runner": ["GRANT pg_execute_server_program TO {user}"],
        "admin": ["ALTER ROLE {user} CREATEROLE CREATEDB"],
    }
    with postgres_accounts(accounts) as urls:
        assert capabilities(urls["reader"]) == ()
        writer = probe(source_url.parse(urls["writer"]), "writer").account
        assert writer.capabilities == ("table writes",)
        assert writer.findings() == ["INSERT on public.t"]
        assert capabilities(urls["filer"]) == ("file writes",)
        assert capabilities(urls["runner"]) == ("server programs",)
        assert capabilities(urls["admin"]) == ("account admin", "create databases")
    postgres = probe(source_url.parse(POSTGRES_SERVER), "postgres").account
    assert postgres.superuser
    assert postgres.capabilities is not None
    assert {"file writes", "server programs"} <= set(postgres.capabilities)


def test_sqlite_file_writable_by_this_user(tmp_path: Path) -> None:
    path = tmp_path / "erp.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER)")
    account = probe(source_url.parse(f"sqlite:///{path}"), "erp").account
    assert account.capabilities == ("writable file",)
    assert str(path) in account.findings()[0]
