"""Bad input at the command line gets one line of error and loses nothing: arguments that are not UTF-8, a
question far too long to send to a model, a store that goes away mid-command, an analysis that could not read
every table."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from bot.messages import MAX_MESSAGE_CHARS
from core.store.embedded import EmbeddedServer
from tests.cli.conftest import Cli
from tests.conftest import create_scratch_database
from tests.fakes.tcp_proxy import TcpProxy
from tests.support import MARIADB_SERVER, REPO

NOT_UTF8 = os.fsdecode(b"orders \xff\xfe in 2024")  # what Python makes of bytes that are not UTF-8 in argv


@pytest.fixture
def initialised(cli: Cli) -> Cli:
    result = cli("init")
    assert result.returncode == 0, result.stderr
    return cli


@pytest.mark.parametrize(
    "args",
    [
        ("ask", NOT_UTF8),
        ("search", NOT_UTF8),
        ("card", "erp", NOT_UTF8),
        ("note", "add", "erp", "ORD_MST", NOT_UTF8),
        ("source", "add", NOT_UTF8, "sqlite:///x.sqlite"),
        ("source", "add", "erp", "sqlite:///" + NOT_UTF8),
    ],
)
def test_arguments_that_are_not_utf8_are_refused_in_one_line(initialised: Cli, args: tuple[str, ...]) -> None:
    before = (initialised.home / "tablescout.yaml").read_bytes()
    result = initialised(*args)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    position = next(i for i, a in enumerate(args, start=1) if a in (NOT_UTF8, "sqlite:///" + NOT_UTF8))
    assert f"argument {position} is not valid UTF-8 text; nothing was done" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (initialised.home / "tablescout.yaml").read_bytes() == before


def test_a_question_longer_than_any_chat_surface_takes_is_refused_before_a_model_sees_it(initialised: Cli) -> None:
    question = "how many orders " * (MAX_MESSAGE_CHARS // 8)
    result = initialised("ask", question, env={"TABLESCOUT_MODEL": "anthropic:never-called"})
    assert result.returncode == 1
    assert f"I take questions and notes of up to {MAX_MESSAGE_CHARS:,} characters" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_chat_refuses_a_too_long_message_and_goes_on(initialised: Cli) -> None:
    text = "x" * (MAX_MESSAGE_CHARS + 1) + "\nexit\n"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TABLESCOUT_")}
    env = clean | initialised.env | {"TABLESCOUT_HOME": str(initialised.home), "COLUMNS": "200"}
    result = subprocess.run(
        [sys.executable, "-m", "tablescout", "chat"],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"{MAX_MESSAGE_CHARS + 1:,} characters long" in result.stdout


@pytest.fixture
def store_behind_proxy(store_server: EmbeddedServer) -> Iterator[tuple[str, TcpProxy]]:
    url = create_scratch_database(store_server.url, "ts_cut")
    socket_dir = str(url.query["host"])
    proxy = TcpProxy(os.path.join(socket_dir, ".s.PGSQL.5432"))
    through = url.set(host="127.0.0.1", port=proxy.port, query={})
    yield through.render_as_string(hide_password=False), proxy
    proxy.cut()


def test_a_store_that_goes_away_mid_command_is_one_line(home: Path, store_behind_proxy: tuple[str, TcpProxy]) -> None:
    url, proxy = store_behind_proxy
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TABLESCOUT_")}
    env = clean | {"TABLESCOUT_HOME": str(home), "TABLESCOUT_DATABASE_URL": url, "COLUMNS": "200"}
    initialised = subprocess.run(
        [sys.executable, "-m", "tablescout", "init"], capture_output=True, text=True, env=env, cwd=REPO, check=False
    )
    assert initialised.returncode == 0, initialised.stderr
    chat = subprocess.Popen(
        [sys.executable, "-m", "tablescout", "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert chat.stdout is not None
    first = chat.stdout.readline()  # the chat's opening note: the store is open and checked
    assert "Turns run" in first, first
    proxy.cut()
    time.sleep(0.2)
    out, err = chat.communicate("how many orders were placed?\n", timeout=120)
    assert chat.returncode == 1, out + err
    assert "Traceback" not in err
    assert "lost the connection to a database in the middle of the command" in err
    assert len(err.strip().splitlines()) == 1, err


@pytest.fixture
def partly_readable_mariadb() -> Iterator[str]:
    """A MariaDB database whose account may read one table and only one column of the other."""
    name = f"ts_skip_{uuid.uuid4().hex[:8]}"
    user = f"ts_r_{uuid.uuid4().hex[:8]}"
    server = create_engine(MARIADB_SERVER, isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        for statement in (
            f"CREATE DATABASE `{name}`",
            f"CREATE TABLE `{name}`.ORDERS (ID INT PRIMARY KEY, AMOUNT INT)",
            f"CREATE TABLE `{name}`.PAYROLL (ID INT PRIMARY KEY, SALARY INT)",
            f"CREATE USER '{user}'@'%'",
            f"GRANT SELECT ON `{name}`.ORDERS TO '{user}'@'%'",
            f"GRANT SELECT (ID) ON `{name}`.PAYROLL TO '{user}'@'%'",
        ):
            conn.execute(text(statement))
    yield f"mysql://{user}@127.0.0.1:3306/{name}"
    with server.connect() as conn:
        conn.execute(text(f"DROP USER IF EXISTS '{user}'@'%'"))
        conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
    server.dispose()


@pytest.mark.mariadb
def test_an_analysis_that_skips_tables_says_which_and_exits_non_zero(
    initialised: Cli, partly_readable_mariadb: str
) -> None:
    added = initialised("source", "add", "hr", partly_readable_mariadb)
    assert added.returncode == 0, added.stderr
    result = initialised("analyze", "hr", "--schema-only")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "warning: hr: 1 of 2 tables not fully analysed" in result.stderr
    assert "PAYROLL" in result.stderr.split("warning:")[-1]
    as_json = initialised("analyze", "hr", "--schema-only", "--json")
    assert as_json.returncode == 3
    assert "PAYROLL" in as_json.stderr


@pytest.mark.parametrize("junk", [b"\x00", b"\x07", b"\xff\xfe"])
def test_a_configuration_file_with_bytes_yaml_refuses_is_one_line(initialised: Cli, junk: bytes) -> None:
    config = initialised.home / "tablescout.yaml"
    config.write_bytes(config.read_bytes() + b"roles: {}" + junk + b"\n")
    before = config.read_bytes()
    result = initialised("source", "list")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert str(config) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert config.read_bytes() == before
