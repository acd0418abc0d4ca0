from __future__ import annotations

from pathlib import Path

import pytest

from core.store.embedded import EmbeddedServer
from tests.conftest import create_scratch_database
from tests.support import run_cli


def test_init_creates_embedded_store_and_starter_config(home: Path) -> None:
    first = run_cli(home, "init")
    assert first.returncode == 0, first.stderr
    assert "embedded PostgreSQL" in first.stdout
    assert "created, revision" in first.stdout
    assert (home / "pgdata" / "PG_VERSION").read_text().strip() == "16"
    config = home / "tablescout.yaml"
    assert config.exists()
    assert config.stat().st_mode & 0o077 == 0, "the config may hold secrets: owner-only"
    assert "No roles yet: chat users may query nothing until you write roles" in first.stdout
    again = run_cli(home, "init")
    assert again.returncode == 0, again.stderr
    assert "up to date" in again.stdout


def test_init_keeps_an_existing_config(home: Path) -> None:
    config = home / "tablescout.yaml"
    config.write_text("# mine\nroles:\n  analyst: {}\ndefault_role: analyst\n")
    result = run_cli(home, "init")
    assert result.returncode == 0, result.stderr
    assert config.read_text().startswith("# mine")
    assert "No roles yet" not in result.stdout


def test_commands_before_init_say_so(home: Path) -> None:
    result = run_cli(home, "source", "list")
    assert result.returncode == 1
    assert "run `tablescout init`" in result.stderr


def test_init_on_a_server_named_by_url(home: Path, store_server: EmbeddedServer) -> None:
    url = create_scratch_database(store_server.url, "ts_cli").render_as_string(hide_password=False)
    env = {"TABLESCOUT_DATABASE_URL": url}
    result = run_cli(home, "init", env=env)
    assert result.returncode == 0, result.stderr
    assert "embedded" not in result.stdout
    assert not (home / "pgdata").exists()
    spider = Path(__file__).resolve().parents[3] / "shared/bench/spider/database/concert_singer/concert_singer.sqlite"
    added = run_cli(home, "source", "add", "cs", f"sqlite:///{spider}", env=env)
    assert added.returncode == 0, added.stderr
    listed = run_cli(home, "source", "list", "--json", env=env)
    assert '"name": "cs"' in listed.stdout


def test_server_without_pgvector_is_refused_clearly(home: Path) -> None:
    # The machine's own PostgreSQL 15 has no pgvector installed.
    env = {"TABLESCOUT_DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/postgres"}
    result = run_cli(home, "init", env=env)
    assert result.returncode == 1
    assert "has no pgvector" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://postgres@127.0.0.1:1/x", "cannot reach the metadata store"),
        ("mysql://root@127.0.0.1/x", "must point at PostgreSQL"),
        ("not a url", "not a database URL"),
    ],
)
def test_bad_store_urls(home: Path, url: str, message: str) -> None:
    result = run_cli(home, "init", env={"TABLESCOUT_DATABASE_URL": url})
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_config_stops_before_starting_anything(home: Path) -> None:
    (home / "tablescout.yaml").write_text("sources: {}\nrolez: {}\n")
    result = run_cli(home, "init")
    assert result.returncode == 1
    assert "tablescout.yaml:2: rolez: unknown key" in result.stderr
    assert not (home / "pgdata").exists()
