"""`tablescout demo`, `ask` and `chat` as a user runs them: a fresh home on the embedded store, the sample ERP,
and a fake model server speaking the Anthropic API (the real SDK runs inside the command)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.redis_server import redis_url
from tests.support import REPO
from tests.workers.turns.scripts import ORDERS_2024, search_card_sql_answer
from workers.models.local_gguf import record_path

QUESTION = "How many orders were placed in 2024?"


def tablescout(
    home: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TABLESCOUT_", "ANTHROPIC_", "OPENAI_"))}
    clean.update({"TABLESCOUT_HOME": str(home), "COLUMNS": "200"})
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "tablescout", *args],
        capture_output=True,
        text=True,
        env=clean,
        cwd=REPO,
        input=stdin,
        timeout=900,
        check=False,
    )


def model_env(server: FakeModelServer) -> dict[str, str]:
    return {
        "TABLESCOUT_MODEL": "anthropic:fake-model",
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": server.url,
    }


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The README's first step: `tablescout demo` in a fresh home, with no model configured."""
    home = tmp_path_factory.mktemp("demo-home")
    return home, tablescout(home, "demo", "--no-chat")


def test_demo_without_a_model_shows_candidate_tables_and_never_answers(
    demo: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    home, proc = demo
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "embedded PostgreSQL" in out
    assert "Registered source erp" in out
    assert out.count("question>") == 3
    assert out.count("No model is configured") == 3
    assert "TABLESCOUT_MODEL=anthropic:" in out
    assert "ORD_MST" in out
    assert "answer (" not in out  # no answer panel: without a model nothing is presented as an answer
    again = tablescout(home, "demo", "--no-chat", "-q", "Which customers returned goods?")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "already registered" in again.stdout
    assert "RET_DTL" in again.stdout


def test_ask_answers_with_the_number_from_the_live_table(
    demo: tuple[Path, subprocess.CompletedProcess[str]], fake_anthropic: FakeModelServer
) -> None:
    home, _ = demo
    fake_anthropic.script(
        search_card_sql_answer(QUESTION, lambda t: ORDERS_2024.replace("ORD_MST", t), "{value} orders in 2024.")
    )
    proc = tablescout(home, "ask", QUESTION, "--json", env=model_env(fake_anthropic))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    with sqlite3.connect(home / "sample" / "erp.sqlite") as conn:
        expected = conn.execute(ORDERS_2024).fetchone()[0]
    assert {"status", "answer", "rounds", "tables_used", "sql"} <= set(data)
    assert data["status"] == "answered"
    assert data["answer"] == f"{expected} orders in 2024."
    assert data["rounds"] == 4
    assert data["tables_used"] == ["erp.ORD_MST"]
    [run] = data["sql"]
    assert run == {
        "database": "erp",
        "sql": ORDERS_2024,
        "columns": ["COUNT(*)"],
        "rows": [[expected]],
        "truncated": False,
        "error": None,
    }
    assert "running the turn in this process" in proc.stderr

    fake_anthropic.script(
        search_card_sql_answer(QUESTION, lambda t: ORDERS_2024.replace("ORD_MST", t), "{value} orders in 2024.")
    )
    shown = tablescout(home, "ask", QUESTION, env=model_env(fake_anthropic))
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert f"{expected} orders in 2024." in shown.stdout
    assert "SQL on erp" in shown.stdout
    assert "Tables used: erp.ORD_MST" in shown.stdout


def test_ask_without_a_model_says_how_to_configure_one(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    home, _ = demo
    proc = tablescout(home, "ask", QUESTION, "--json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["status"] == "no_model"
    assert data["sql"] == []
    assert "TABLESCOUT_MODEL" in data["answer"]
    assert data["candidates"][0]["table"] == "ORD_MST"


def test_ask_without_a_model_starts_the_installed_local_model_and_says_when_it_cannot(
    demo: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    """After `tablescout model install-local`, `ask` starts that model itself (tests/workers/models/local answers
    with the real one); a record whose file has gone says so and how to repair it."""
    home, _ = demo
    record = record_path(home)
    record.parent.mkdir(parents=True, exist_ok=True)
    fields = {"name": "qwen2.5-coder-1.5b-instruct", "path": str(home / "models" / "model.gguf"), "bytes": 1}
    fields |= {"sha256": "0" * 64, "source": "test", "installed_at": "2026-12-06T00:00:00+00:00"}
    record.write_text(json.dumps(fields), encoding="utf-8")
    try:
        proc = tablescout(home, "ask", QUESTION, "--json")
    finally:
        record.unlink()
    assert proc.returncode != 0
    assert proc.stdout == ""
    said = " ".join(proc.stderr.split())
    assert "the local model server stopped while starting" in said
    assert f"the local model file {home / 'models' / 'model.gguf'} is missing" in said
    assert "tablescout model install-local" in said
    assert "Traceback" not in proc.stderr


def test_chat_continues_one_conversation_until_exit(
    demo: tuple[Path, subprocess.CompletedProcess[str]], fake_anthropic: FakeModelServer
) -> None:
    home, _ = demo
    seen: list[int] = []

    def model(exchange: object) -> object:
        from tests.fakes.model_server import Say

        seen.append(1)
        return Say(f"reply {len(seen)}")

    fake_anthropic.script(model)  # type: ignore[arg-type]
    proc = tablescout(home, "chat", env=model_env(fake_anthropic), stdin="How many customers?\nAnd in Busan?\nexit\n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "reply 1" in proc.stdout
    assert "reply 2" in proc.stdout
    second = fake_anthropic.requests[1].raw["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]  # the first exchange is history


def test_ask_refuses_bad_input_clearly(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    home, _ = demo
    unknown_db = tablescout(home, "ask", QUESTION, "--db", "nosuch")
    assert unknown_db.returncode == 1
    assert "no database named 'nosuch'" in unknown_db.stderr
    bad_user = tablescout(home, "ask", QUESTION, "--user", "U123")
    assert bad_user.returncode == 1
    assert "PLATFORM:ID" in bad_user.stderr
    bad_model = tablescout(home, "ask", QUESTION, env={"TABLESCOUT_MODEL": "gpt-4o"})
    assert bad_model.returncode == 1
    assert "names no provider" in bad_model.stderr
    no_key = tablescout(home, "ask", QUESTION, env={"TABLESCOUT_MODEL": "anthropic:m"})
    assert no_key.returncode == 1
    assert "needs ANTHROPIC_API_KEY" in no_key.stderr
    model = {"TABLESCOUT_MODEL": "anthropic:m", "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    empty_note = tablescout(home, "chat", stdin="remember this:\nexit\n", env=model)
    assert empty_note.returncode == 1
    assert "say what to remember" in empty_note.stderr
    no_broker = tablescout(home, "worker")
    assert no_broker.returncode == 1
    assert "TABLESCOUT_REDIS_URL is not set" in no_broker.stderr
    no_model = tablescout(home, "worker", env={"TABLESCOUT_REDIS_URL": redis_url(13)})
    assert no_model.returncode == 1
    assert "no model is configured" in no_model.stderr
