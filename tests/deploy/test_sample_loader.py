"""deploy/sample/load_sample.py, the trial stack's sample-load service, run here against the MariaDB server: the
sample databases loaded, a read-only account, the sources registered and analysed; a second run changes nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError, ProgrammingError

from core.store.embedded import EmbeddedServer
from tests.conftest import create_scratch_database
from tests.deploy.tooling import DEPLOY, clean_env, run_command
from tests.support import MARIADB_SERVER

pytestmark = pytest.mark.mariadb

SCRIPT = DEPLOY / "sample" / "load_sample.py"


class Trial:
    def __init__(self, home: Path, store_url: str) -> None:
        tag = uuid.uuid4().hex[:8]
        self.prefix = f"ts_trial_{tag}_"
        self.reader = f"ts_reader_{tag}"
        self.password = f"pw-{tag}"
        self.env = clean_env(
            TABLESCOUT_HOME=str(home),
            TABLESCOUT_DATABASE_URL=store_url,
            SAMPLE_DB_ROOT_PASSWORD="",  # the development server's root has none
            SAMPLE_DB_READER_PASSWORD=self.password,
            COLUMNS="200",
        )

    def load(self, *extra: str) -> tuple[int, str, str]:
        argv = ["python", str(SCRIPT), "--host", "127.0.0.1", "--prefix", self.prefix, "--reader", self.reader]
        result = run_command([*argv, *extra], self.env, timeout=600)
        return result.returncode, result.stdout, result.stderr

    def tablescout(self, *args: str) -> str:
        result = run_command(["tablescout", *args], self.env)
        assert result.returncode == 0, result.stderr
        return result.stdout


@pytest.fixture
def trial(home: Path, store_server: EmbeddedServer) -> Iterator[Trial]:
    url = create_scratch_database(store_server.url, "ts_trial").render_as_string(hide_password=False)
    made = Trial(home, url)
    assert run_command(["tablescout", "init"], made.env).returncode == 0
    yield made
    engine = create_engine(MARIADB_SERVER)
    with engine.begin() as conn:
        for name in ("erp", "billing"):
            conn.execute(text(f"DROP DATABASE IF EXISTS `{made.prefix}{name}`"))
        conn.execute(text(f"DROP USER IF EXISTS '{made.reader}'@'%'"))
    engine.dispose()


def test_the_trial_setup_loads_registers_and_analyses_and_can_run_again(trial: Trial) -> None:
    code, out, err = trial.load()
    assert code == 0, out + err
    assert "The sample databases are ready" in out
    sources = {row["name"]: row for row in json.loads(trial.tablescout("source", "list", "--json"))}
    assert set(sources) == {"erp", "billing"}
    card = json.loads(trial.tablescout("card", "erp", "ORD_MST_BAK", "--json"))
    assert (card["role"], card["copy_of"]) == ("backup", "ORD_MST")
    # the password never lands in the configuration file, only its variable
    config = (Path(trial.env["TABLESCOUT_HOME"]) / "tablescout.yaml").read_text()
    assert "${SAMPLE_DB_READER_PASSWORD}" in config
    assert trial.password not in config
    assert_reads_only(trial)

    code, out, err = trial.load()
    assert code == 0, out + err
    assert "Sample database erp is already loaded" in out
    assert "Source billing is already registered" in out
    assert "0 chunks embedded" in out  # nothing changed, nothing re-indexed


def test_a_missing_password_is_one_clear_line(trial: Trial) -> None:
    del trial.env["SAMPLE_DB_READER_PASSWORD"]
    code, _out, err = trial.load()
    assert code == 1
    assert err.strip() == "error: SAMPLE_DB_READER_PASSWORD is not set; put it in deploy/.env"


def test_an_unreachable_server_is_one_clear_line(trial: Trial) -> None:
    code, _, err = trial.load("--port", "1")
    assert code == 1
    assert err.strip().startswith("error: cannot prepare the sample databases on 127.0.0.1:1:")
    assert len(err.strip().splitlines()) == 1


def assert_reads_only(trial: Trial) -> None:
    """The account the sources use may read the sample databases and do nothing else."""
    reader = create_engine(
        f"mysql+pymysql://{trial.reader}:{trial.password}@127.0.0.1:3306/{trial.prefix}erp", pool_pre_ping=True
    )
    try:
        with reader.connect() as conn:
            assert conn.scalar(text("SELECT COUNT(*) FROM ORD_MST")) > 0
            with pytest.raises((OperationalError, ProgrammingError), match="denied"):
                conn.execute(text("DELETE FROM ORD_MST"))
            with pytest.raises((OperationalError, ProgrammingError), match="denied"):
                conn.execute(text("CREATE TABLE scratch (id INT)"))
    finally:
        reader.dispose()
