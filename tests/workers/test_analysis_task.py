from __future__ import annotations

from pathlib import Path

import pytest

from catalog.sample_erp import build_sqlite
from core.store.embedded import EmbeddedServer
from tests.catalog.analysis_support import new_installation


def test_task_runs_the_same_analysis(
    store_server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installation = new_installation(store_server, tmp_path / "home")
    paths = build_sqlite(tmp_path / "sample")
    installation.add("erp", f"sqlite:///{paths['erp']}")
    monkeypatch.setenv("TABLESCOUT_HOME", str(installation.settings.home))
    assert installation.settings.database_url is not None
    monkeypatch.setenv("TABLESCOUT_DATABASE_URL", installation.settings.database_url.get_secret_value())
    from workers.app import app
    from workers.tasks.analysis import analyze_all_task, analyze_source_task

    assert app.conf.task_acks_late
    assert analyze_source_task.name == "tablescout.catalog.analyze_source"
    analyze_source_task.apply(args=("erp",)).get()
    tables = installation.tables("erp")
    assert tables["ORD_MST_BAK"].role == "backup"
    analyze_all_task.apply().get()
    assert installation.tables("erp")["ORD_MST"].analysed_at is not None
    installation.store.close()
