"""Light commands start without loading the chat SDKs, the model clients, the encoders or the turn code (issue 17):
each runs as a user runs it, under Python's import-time report (PYTHONPROFILEIMPORTTIME, the environment form of
`python -X importtime`), and the modules it reports are checked, not the time it took."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from catalog import sample_erp
from core.store.embedded import EmbeddedServer
from tablescout.cli import COMMANDS, sample_cmd
from tests.cli.conftest import Cli
from tests.conftest import create_scratch_database

#: Modules (and their submodules) that only the commands using them may import.
HEAVY = (
    "botbuilder",
    "slack_bolt",
    "slack_sdk",
    "sentence_transformers",
    "torch",
    "transformers",
    "sqlglot",
    "anthropic",
    "openai",
    "celery",
    "msal",
    "xllamacpp",
    "workers.turns",
)


def imported_modules(stderr: str) -> set[str]:
    """Module names from an import-time report (`import time: SELF | CUMULATIVE | NAME`, one line per module)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":  # the header line
                names.add(name)
    return names


def heavy_among(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def run_reporting_imports(cli: Cli, *args: str) -> tuple[str, set[str]]:
    result = cli(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    modules = imported_modules(result.stderr)
    assert "tablescout.cli" in modules  # the report covers the command itself
    return result.stdout, modules


@pytest.fixture(scope="module")
def with_source(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    """An initialised installation with one SQLite source registered, shared by this file's tests: each runs a command
    that reads it (`init` on a current store changes nothing)."""
    url = create_scratch_database(store_server.url, "ts_cli").render_as_string(hide_password=False)
    tmp_path = tmp_path_factory.mktemp("startup-imports")
    (tmp_path / "home").mkdir()
    cli = Cli(home=tmp_path / "home", env={"TABLESCOUT_DATABASE_URL": url})
    assert cli("init").returncode == 0
    db = tmp_path / "shop.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    added = cli("source", "add", "shop", f"sqlite:///{db}")
    assert added.returncode == 0, added.stderr
    return cli


def test_help_imports_no_heavy_module(cli: Cli) -> None:
    stdout, modules = run_reporting_imports(cli, "--help")
    assert "source" in stdout
    assert heavy_among(modules) == []
    # Nor does it open a database: building the command line loads neither the store nor its driver.
    assert {"sqlalchemy", "psycopg", "alembic"}.isdisjoint(modules)


def test_source_list_imports_no_heavy_module(with_source: Cli) -> None:
    stdout, modules = run_reporting_imports(with_source, "source", "list")
    assert "shop" in stdout
    assert heavy_among(modules) == []
    assert "alembic" not in modules  # the store is checked to be current without loading Alembic


@pytest.mark.parametrize(
    "args", [("note", "list"), ("init",), ("source", "add", "--help"), ("health", "--help")], ids=" ".join
)
def test_other_light_commands_import_no_heavy_module(with_source: Cli, args: tuple[str, ...]) -> None:
    _, modules = run_reporting_imports(with_source, *args)
    assert heavy_among(modules) == []


def test_init_on_a_current_store_loads_neither_the_orm_nor_the_catalog(with_source: Cli) -> None:
    """Every source the file lists is registered with its aliases: nothing to change, so the revision check and
    the comparison with the file are plain SQL."""
    stdout, modules = run_reporting_imports(with_source, "init")
    assert "up to date" in stdout
    assert {"sqlalchemy.orm", "core.store.models", "catalog.registration", "alembic"}.isdisjoint(modules)


def test_init_still_registers_the_sources_the_file_lists(cli: Cli, tmp_path: Path) -> None:
    assert cli("init").returncode == 0
    db = tmp_path / "listed.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE items (id INTEGER PRIMARY KEY)")
    config = cli.home / "tablescout.yaml"
    written = config.read_text()
    assert "\nsources: {}\n" in written
    config.write_text(written.replace("\nsources: {}\n", f"\nsources:\n  listed:\n    url: sqlite:///{db}\n"))
    stdout, modules = run_reporting_imports(cli, "init")
    assert "Registered source listed from the configuration file" in stdout
    assert "catalog.registration" in modules
    written = config.read_text()
    config.write_text(written.replace(f"url: sqlite:///{db}", f"url: sqlite:///{db}\n    aliases: [stock]"))
    stdout, _ = run_reporting_imports(cli, "init")
    assert "Aliases of source listed from the configuration file: stock" in stdout


def test_note_list_as_the_operator_loads_no_search_code_or_numpy(with_source: Cli) -> None:
    _, modules = run_reporting_imports(with_source, "note", "list")
    assert {"search.service", "numpy"}.isdisjoint(modules)


@pytest.mark.parametrize("args", [("source", "list"), ("note", "list"), ("card", "shop", "customers")], ids=" ".join)
def test_read_only_commands_read_the_store_without_sqlalchemy(with_source: Cli, args: tuple[str, ...]) -> None:
    """The operator's `source list`, `note list` and `card` read with plain SQL over psycopg (issue 35)."""
    result = with_source(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    if args[0] == "card":  # registered, not analysed: the card's own answer, read the same light way
        assert "has not been analysed yet" in result.stderr
    else:
        assert result.returncode == 0, result.stderr[-2000:]
    modules = imported_modules(result.stderr)
    assert {"psycopg", "tablescout.cli"} <= modules
    assert not any(m == "sqlalchemy" or m.startswith(("sqlalchemy.", "core.store.models", "alembic")) for m in modules)


@pytest.mark.parametrize(
    ("args", "module"),
    [(("source", "list"), "source_cmd"), (("note", "list"), "note_cmd"), (("card", "shop", "customers"), "card_cmd")],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else value,
)
def test_a_light_command_loads_no_other_command_module(with_source: Cli, args: tuple[str, ...], module: str) -> None:
    """Each command's module is imported when that command runs (tablescout.cli.COMMANDS), not to build the
    command line: the light commands start without the other commands' code."""
    result = with_source(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    modules = imported_modules(result.stderr)
    commands = sorted(m for m in modules if m.startswith("tablescout.cli.") and m.endswith("_cmd"))
    assert commands == [f"tablescout.cli.{module}"]


def test_help_lists_every_command_and_loads_them_all(cli: Cli) -> None:
    """`--help` names each command with its summary, so it imports every command module, as before."""
    stdout, modules = run_reporting_imports(cli, "--help")
    for name in COMMANDS:
        assert f"│ {name} " in stdout
    assert {f"tablescout.cli.{module}" for module, _ in COMMANDS.values()} <= modules


def test_a_command_that_needs_a_chat_sdk_still_loads_it(with_source: Cli) -> None:
    """The report sees modules a command imports when it runs, so the empty lists above mean "not imported"."""
    stdout, modules = run_reporting_imports(with_source, "directory", "sync", "--json")
    assert '"synced": false' in stdout  # no credentials: nothing is asked of Slack or Entra ID
    assert {"slack_sdk", "msal"} <= {m.split(".")[0] for m in heavy_among(modules)}


def test_sample_names_in_the_help_are_the_sample_databases() -> None:
    assert sample_cmd.SAMPLE_DATABASES == sample_erp.DATABASES
