from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.store.embedded import EmbeddedServer
from tests.cli.conftest import Cli
from tests.conftest import create_scratch_database

CANDIDATE_KEYS = {"database", "schema", "table", "score", "role", "copy_of", "matched_by"}


@pytest.fixture(scope="module")
def analysed(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    url = create_scratch_database(store_server.url, "ts_cli")
    cli = Cli(tmp_path_factory.mktemp("home"), {"TABLESCOUT_DATABASE_URL": url.render_as_string(hide_password=False)})
    assert cli("init").returncode == 0
    assert cli("sample", "build", "--register").returncode == 0
    result = cli("analyze", "--all")
    assert result.returncode == 0, result.stderr
    assert "search index" in result.stdout
    return cli


def test_batch_output_is_the_public_contract(analysed: Cli, tmp_path: Path) -> None:
    batch = tmp_path / "questions.jsonl"
    lines = [
        {"id": "q1", "question": "how many orders were placed?", "databases": ["erp"]},
        {"id": 2, "question": "unpaid invoices"},
        {"id": "bad-db", "question": "orders", "databases": ["nowhere"]},
        {"id": "ghost", "question": "orders", "user": "slack:U_NOBODY"},
    ]
    batch.write_text("\n".join(json.dumps(line) for line in lines) + "\n\nnot json\n")
    result = analysed("search", "--batch", str(batch), "-k", "30")
    assert result.returncode == 1, "bad lines are reported and make the exit status non-zero"
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["id"] for o in out] == ["q1", 2, "bad-db", "ghost", None]
    first = out[0]
    assert set(first) == {"id", "searched", "candidates", "denied_tables", "parts"}
    assert first["searched"] == {"databases": ["erp"], "count": 1, "total": 2}
    assert first["candidates"][0]["table"] == "ORD_MST"
    assert all(
        CANDIDATE_KEYS <= set(c) <= CANDIDATE_KEYS | {"through", "values", "covers"} for c in first["candidates"]
    )
    assert len([c for c in first["candidates"] if c["copy_of"] is None]) <= 30
    copies = [c for c in first["candidates"] if c["copy_of"] == "ORD_MST"]
    assert {c["table"] for c in copies} == {"ORD_MST_BAK", "ORD_MST_202312"}
    assert out[1]["candidates"][0]["database"] == "billing"
    assert "there is no database named 'nowhere'" in out[2]["error"]
    assert "not in the synced directory" in out[3]["error"]
    assert "line 6: not JSON" in out[4]["error"]


def test_single_question_json(analysed: Cli) -> None:
    result = analysed("search", "how many orders were placed?", "--db", "erp", "-k", "3", "--json")
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["searched"]["databases"] == ["erp"]
    [first, *_] = body["candidates"]
    assert first["table"] == "ORD_MST"
    assert first["engine"].startswith("sqlite")
    assert "STATUS_CODE" in first["codes"]
    text = analysed("search", "how many orders were placed?", "--db", "erp")
    assert "searched 1 of 2 databases" in text.stdout
    assert "ORD_MST" in text.stdout


def test_bad_input(analysed: Cli, tmp_path: Path) -> None:
    batch = tmp_path / "bad.jsonl"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"question": ""}, "the question is empty"),
        ({"question": "orders", "databases": ["crm"]}, "there is no database named 'crm'"),
        ({"question": "orders", "user": "slack:U_NOBODY"}, "not in the synced directory"),
        ({"question": "orders", "user": "U_NOBODY"}, "PLATFORM:ID"),
        ({"question": 42}, 'a "question" string'),
    ]
    batch.write_text("".join(json.dumps({"id": i} | case) + "\n" for i, (case, _) in enumerate(cases)))
    result = analysed("search", "--batch", str(batch))
    assert result.returncode == 1
    out = [json.loads(line) for line in result.stdout.splitlines()]
    for (_, message), line in zip(cases, out, strict=True):
        assert message in line["error"]
    for args, message in [
        (("orders", "-k", "0"), "k must be between 1 and 30"),
        (("--batch", str(batch), "-k", "1000"), "k must be between 1 and 30"),
        ((), "give a question"),
    ]:
        single = analysed("search", *args)
        assert single.returncode == 1
        assert message in single.stderr
        assert "Traceback" not in single.stderr


def test_missing_batch_file(analysed: Cli, tmp_path: Path) -> None:
    result = analysed("search", "--batch", str(tmp_path / "missing.jsonl"))
    assert result.returncode == 1
    assert "cannot read" in result.stderr
