"""Aliases of a registered source: the file is their one source of truth; `init` and `source alias add|remove` bring
the store's copy (what @pins and --db resolve) in line with it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.support import SPIDER


@pytest.fixture
def registered(cli: Cli, tmp_path: Path) -> Cli:
    db = tmp_path / "cs.sqlite"
    shutil.copy(SPIDER / "concert_singer" / "concert_singer.sqlite", db)
    assert cli("init").returncode == 0
    added = cli("source", "add", "erp", f"sqlite:///{db}", "--alias", "orders")
    assert added.returncode == 0, added.stderr
    return cli


def _aliases(cli: Cli) -> dict[str, list[str]]:
    listed = cli("source", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {row["name"]: row["aliases"] for row in json.loads(listed.stdout)}


def _pin_resolves(cli: Cli, label: str) -> bool:
    """Whether `--db LABEL` names a database, as an @LABEL pin in chat does (both read the store's aliases)."""
    result = cli("search", "how many singers", "--db", label, "--json")
    if result.returncode == 0:
        return True
    assert f"there is no database named {label!r}" in result.stderr, result.stderr
    return False


def test_init_applies_the_files_aliases_to_a_registered_source(registered: Cli) -> None:
    config = registered.home / "tablescout.yaml"
    text = config.read_text()
    assert "- orders" in text
    config.write_text(text.replace("- orders", "- invoices\n      - billing_docs"))
    assert not _pin_resolves(registered, "invoices")
    result = registered("init")
    assert result.returncode == 0, result.stderr
    assert "Aliases of source erp from the configuration file: invoices, billing_docs" in result.stdout
    assert _aliases(registered) == {"erp": ["invoices", "billing_docs"]}
    assert _pin_resolves(registered, "invoices")
    assert not _pin_resolves(registered, "orders")
    again = registered("init")
    assert "Aliases of source" not in again.stdout  # nothing left to change


def test_alias_add_and_remove_change_file_and_store_together(registered: Cli) -> None:
    config = registered.home / "tablescout.yaml"
    added = registered("source", "alias", "add", "ERP", "invoices")
    assert added.returncode == 0, added.stderr
    assert "Source erp is now also @invoices" in added.stdout
    assert _aliases(registered) == {"erp": ["orders", "invoices"]}
    assert "- invoices" in config.read_text()
    assert _pin_resolves(registered, "invoices")
    removed = registered("source", "alias", "remove", "erp", "ORDERS")
    assert removed.returncode == 0, removed.stderr
    assert _aliases(registered) == {"erp": ["invoices"]}
    assert "orders" not in config.read_text()
    assert not _pin_resolves(registered, "orders")
    assert registered("source", "alias", "remove", "erp", "invoices").returncode == 0
    assert _aliases(registered) == {"erp": []}
    assert "aliases" not in config.read_text().split("sources:")[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("add", "erp", "erp"), "'erp' is already a source"),
        (("add", "erp", "orders"), "'orders' is already an alias of source 'erp'"),
        (("add", "erp", "1bad"), "alias '1bad' must start with a letter"),
        (("add", "crm", "x"), "there is no source named 'crm'"),
        (("remove", "erp", "invoices"), "source 'erp' has no alias 'invoices' (its aliases: orders)"),
    ],
)
def test_bad_alias_changes_are_refused_and_change_nothing(registered: Cli, args: tuple[str, ...], message: str) -> None:
    config = registered.home / "tablescout.yaml"
    before = config.read_text()
    result = registered("source", "alias", *args)
    assert result.returncode == 1
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert config.read_text() == before
    assert _aliases(registered) == {"erp": ["orders"]}
