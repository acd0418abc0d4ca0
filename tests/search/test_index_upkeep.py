"""The vector index across a run of indexing: kept row by row for small runs, set aside and built once for large
ones, built again when missing or left invalid, and managed by one job at a time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Connection, Engine, select, text

from catalog.analysis import AnalysisOptions
from core.store.embedded import EmbeddedServer
from core.store.models import SearchChunk
from core.store.repositories import vector_index
from search import indexing
from search.index_upkeep import BulkPolicy, IndexUpkeep
from tests.catalog.analysis_support import Installation, new_installation
from tests.support import default_embedder, fast_embedder, sample_databases
from workers.catalog_refresh import RefreshReport, refresh_source

SCHEMA_ONLY = AnalysisOptions(profile=False)
#: A policy under which any run sets the index aside (the default waits for 10,000 chunk vectors).
EVERY_RUN = BulkPolicy(min_chunks=1, share=0.25)


@pytest.fixture
def installation(store_server: EmbeddedServer, tmp_path: Path) -> Iterator[Installation]:
    made = new_installation(store_server, tmp_path / "home")
    sample = sample_databases(tmp_path / "sample")
    for name in ("erp", "billing"):
        made.add(name, f"sqlite:///{sample[name]}")
    yield made
    made.store.close()


def _definition(engine: Engine) -> tuple[int, str] | None:
    """The vector index's oid and definition, None when there is none."""
    with engine.connect() as conn:
        row = conn.execute(
            text("SELECT to_regclass(:n)::oid, indexdef FROM pg_indexes WHERE indexname = :n"),
            {"n": vector_index.NAME},
        ).first()
    return (int(row[0]), str(row[1])) if row else None


def _state(engine: Engine) -> str:
    with engine.connect() as conn:
        return vector_index.state(conn)


def _entries(conn: Connection) -> float:
    """The tuples in the vector index, as its build counted them."""
    found = conn.scalar(text("SELECT reltuples FROM pg_class WHERE oid = to_regclass(:n)"), {"n": vector_index.NAME})
    return float(found)


def _refresh(installation: Installation, name: str, run: IndexUpkeep) -> int:
    report = refresh_source(
        installation.settings, installation.store, name, SCHEMA_ONLY, embedder=default_embedder(), upkeep=run
    )
    assert report.analysis.error is None
    assert report.index is not None
    return report.index.embedded


def _fast_pass(installation: Installation, run: IndexUpkeep) -> RefreshReport:
    """The sample ERP analysed and indexed by the fast pass alone (left unrefined) in `run`."""
    return refresh_source(
        installation.settings,
        installation.store,
        "erp",
        SCHEMA_ONLY,
        embedder=default_embedder(),
        fast=fast_embedder(),
        upkeep=run,
        refine=False,
    )


def _nearest_by_index(engine: Engine) -> list[tuple[int, int]]:
    """For a few chunks: (the chunk, the chunk the vector index finds nearest to its own vector)."""
    with engine.begin() as conn:
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = conn.scalars(
            text(
                "EXPLAIN SELECT id FROM search_chunks ORDER BY embedding <=> "
                "(SELECT embedding FROM search_chunks ORDER BY id LIMIT 1) LIMIT 1"
            )
        ).all()
        assert any(vector_index.NAME in line for line in plan), plan
        probes = conn.execute(text("SELECT id, embedding::text FROM search_chunks ORDER BY id LIMIT 5")).all()
        return [
            (
                int(chunk_id),
                int(
                    conn.scalar(
                        text("SELECT id FROM search_chunks ORDER BY embedding <=> CAST(:v AS vector) LIMIT 1"),
                        {"v": vector},
                    )
                ),
            )
            for chunk_id, vector in probes
        ]


def test_a_large_run_sets_the_vector_index_aside_and_builds_it_once_at_the_end(installation: Installation) -> None:
    engine = installation.store.engine
    migrated = _definition(engine)
    assert migrated is not None
    with IndexUpkeep(installation.store, EVERY_RUN) as run:
        written = _refresh(installation, "erp", run)
        assert written > 0
        assert _state(engine) == "missing"
        written += _refresh(installation, "billing", run)
        assert _state(engine) == "missing"  # and so did the next source's: one build for the whole run
    rebuilt = _definition(engine)
    assert rebuilt is not None
    assert rebuilt[1] == migrated[1]
    assert rebuilt[0] != migrated[0]
    assert run.built_s is not None
    assert _state(engine) == "valid"
    with engine.connect() as conn:
        stored = conn.scalar(text("SELECT count(*) FROM search_chunks"))
        entries = _entries(conn)
    assert stored == written
    assert entries == stored
    assert all(chunk == nearest for chunk, nearest in _nearest_by_index(engine))


def test_a_small_run_keeps_the_vector_index_and_updates_it_row_by_row(installation: Installation) -> None:
    engine = installation.store.engine
    before = _definition(engine)
    with IndexUpkeep(installation.store) as run:  # the default policy: the sample's chunks are far below it
        written = _refresh(installation, "erp", run)
    assert written > 0
    assert _definition(engine) == before
    assert run.built_s is None
    with engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM search_chunks")) == written
    assert all(chunk == nearest for chunk, nearest in _nearest_by_index(engine))


@pytest.mark.parametrize("damage", ["dropped", "invalid"])
def test_a_missing_or_invalid_vector_index_is_built_by_the_next_run(installation: Installation, damage: str) -> None:
    engine = installation.store.engine
    with IndexUpkeep(installation.store) as run:
        _refresh(installation, "erp", run)
    before = _definition(engine)
    assert before is not None
    with engine.begin() as conn:
        if damage == "dropped":  # a job killed between setting the index aside and building it
            conn.execute(text(f"DROP INDEX {vector_index.NAME}"))
        else:  # what a concurrent build that was cancelled half way leaves
            conn.execute(
                text("UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass(:n)"),
                {"n": vector_index.NAME},
            )
    assert _state(engine) == damage.replace("dropped", "missing")
    with IndexUpkeep(installation.store) as run:
        assert _refresh(installation, "erp", run) == 0  # nothing changed: only the index is built
    after = _definition(engine)
    assert run.built_s is not None
    assert _state(engine) == "valid"
    assert after is not None
    assert after[1] == before[1]
    assert after[0] != before[0]
    assert all(chunk == nearest for chunk, nearest in _nearest_by_index(engine))


def test_one_job_at_a_time_manages_the_vector_index(installation: Installation) -> None:
    engine = installation.store.engine
    held = vector_index.suspend(engine)
    assert held is not None
    assert _state(engine) == "missing"
    assert vector_index.suspend(engine) is None  # another job leaves it to the holder
    assert vector_index.ensure(engine) is None
    assert _state(engine) == "missing"
    with IndexUpkeep(installation.store, EVERY_RUN) as run:
        written = _refresh(installation, "erp", run)  # a run that wanted to set it aside writes without upkeep
    assert run.built_s is None
    assert _state(engine) == "missing"
    assert held.resume() > 0
    assert _state(engine) == "valid"
    with engine.connect() as conn:
        entries = _entries(conn)
    assert entries == written  # the holder's build took in what the other job wrote meanwhile
    again = vector_index.suspend(engine)  # the lock went with the build
    assert again is not None
    again.resume()


def test_a_large_refinement_sets_the_vector_index_aside_and_the_fast_pass_does_not(installation: Installation) -> None:
    engine = installation.store.engine
    migrated = _definition(engine)
    with IndexUpkeep(installation.store, EVERY_RUN) as run:
        report = _fast_pass(installation, run)
        assert report.index is not None
        assert report.index.fast > 0
        assert report.source_id is not None
        assert _definition(engine) == migrated  # fast vectors are not in the vector index: nothing to set aside
        assert run.refine(report.source_id, default_embedder()) == report.index.fast
        assert _state(engine) == "missing"
    assert run.built_s is not None
    with engine.connect() as conn:
        assert _entries(conn) == conn.scalar(text("SELECT count(*) FROM search_chunks")) == report.index.fast
    assert all(chunk == nearest for chunk, nearest in _nearest_by_index(engine))


def test_the_fast_pass_written_batch_by_batch_holds_what_its_plan_makes(
    installation: Installation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexing, "TABLES_PER_BATCH", 4)  # the sample's tables in many batches
    with IndexUpkeep(installation.store) as run:
        report = _fast_pass(installation, run)
    assert report.index is not None
    assert report.source_id is not None
    assert report.index.tables > 4 * 3
    with installation.store.transaction() as session:
        stored = session.execute(
            select(SearchChunk.text, SearchChunk.fast_embedding, SearchChunk.embedding).where(
                SearchChunk.source_id == report.source_id
            )
        ).all()
        again = indexing.plan_index(session, report.source_id, None, default_embedder(), fast_embedder())
    assert len(stored) == report.index.fast == report.index.embedded > 0
    assert again.report.reused == len(stored)  # every chunk the plan makes, unchanged
    assert again.report.embedded == 0
    assert all(row.embedding is None for row in stored)
    texts = [row.text for row in stored]
    made = fast_embedder().embed(texts)
    assert np.array_equal(np.asarray([row.fast_embedding for row in stored], dtype=np.float32), made)
