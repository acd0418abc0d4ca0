from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis
from sqlalchemy import delete, func, select

from catalog.analysis import AnalysisOptions
from core.store.embedded import EmbeddedServer
from core.store.models import SearchChunk
from tests.catalog.analysis_support import Installation, new_installation
from tests.redis_server import redis_url
from tests.support import isolated_settings, sample_databases
from workers.catalog_refresh import refresh_source


def test_task_runs_the_same_analysis(
    store_server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installation = new_installation(store_server, tmp_path / "home")
    paths = sample_databases(tmp_path / "sample")
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


def _vectors(installation: Installation) -> tuple[int, int, int]:
    """(chunks, with their vector, with a fast vector)."""
    with installation.store.transaction() as session:
        total, strong, fast = session.execute(
            select(func.count(), func.count(SearchChunk.embedding), func.count(SearchChunk.fast_embedding))
        ).one()
    return int(total), int(strong), int(fast)


def test_analysis_without_a_broker_ends_refined_and_the_refinement_task_refines_a_source(
    store_server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installation = new_installation(store_server, tmp_path / "home")
    paths = sample_databases(tmp_path / "sample")
    installation.add("erp", f"sqlite:///{paths['erp']}")
    monkeypatch.setenv("TABLESCOUT_HOME", str(installation.settings.home))
    assert installation.settings.database_url is not None
    monkeypatch.setenv("TABLESCOUT_DATABASE_URL", installation.settings.database_url.get_secret_value())
    monkeypatch.setenv("TABLESCOUT_MULTILINGUAL_VECTORS", "false")
    from workers.tasks.analysis import analyze_source_task, refine_source_task

    assert refine_source_task.name == "tablescout.search.refine_source"
    analyze_source_task.apply(args=("erp",)).get()  # fast pass, then refined in the job itself (no broker)
    total, strong, fast = _vectors(installation)
    assert total > 0
    assert (strong, fast) == (total, 0)
    with installation.store.transaction() as session:  # indexed again from nothing, by the fast pass alone
        session.execute(delete(SearchChunk))
    settings = isolated_settings(
        installation.settings.home, database_url=installation.settings.database_url, multilingual_vectors=False
    )
    refreshed = refresh_source(settings, installation.store, "erp", AnalysisOptions(), refine=False)
    source_id = refreshed.source_id
    assert _vectors(installation) == (total, 0, total)
    assert refine_source_task.apply(args=(source_id,)).get() == total
    assert _vectors(installation) == (total, total, 0)
    assert refine_source_task.apply(args=(source_id,)).get() == 0  # redelivered: nothing left to do
    installation.store.close()


def test_analysis_with_a_broker_leaves_refinement_to_a_job_per_source(
    store_server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installation = new_installation(store_server, tmp_path / "home")
    paths = sample_databases(tmp_path / "sample")
    installation.add("erp", f"sqlite:///{paths['erp']}")
    broker = redis_url(13)
    client = redis.Redis.from_url(broker)
    client.flushdb()
    monkeypatch.setenv("TABLESCOUT_HOME", str(installation.settings.home))
    assert installation.settings.database_url is not None
    monkeypatch.setenv("TABLESCOUT_DATABASE_URL", installation.settings.database_url.get_secret_value())
    monkeypatch.setenv("TABLESCOUT_MULTILINGUAL_VECTORS", "false")
    monkeypatch.setenv("TABLESCOUT_REDIS_URL", broker)
    from workers.app import app
    from workers.tasks.analysis import analyze_source_task, refine_source_task

    previous = app.conf.broker_url
    app.conf.broker_url = broker
    try:
        analyze_source_task.apply(args=("erp",)).get()
    finally:
        app.conf.broker_url = previous
        app.close()  # no connection to this broker stays in the app's pool for later tests
    total, strong, fast = _vectors(installation)
    assert total > 0
    assert (strong, fast) == (0, total)  # searchable by the fast vectors; the main ones are the job's
    queued = [json.loads(message)["headers"] for message in client.lrange("celery", 0, -1)]
    client.close()
    assert [h["task"] for h in queued] == ["tablescout.search.refine_source"]
    source_id = int(queued[0]["argsrepr"].strip("(),"))
    assert refine_source_task.apply(args=(source_id,)).get() == total
    assert _vectors(installation) == (total, total, 0)
    installation.store.close()
