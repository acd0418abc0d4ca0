"""The installations the local-model benchmark measures on (the sample ERP and Spider dev, each registered and
analysed once and kept for a later run) and the verified examples it approves for the `examples` system.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import sqlglot
from sqlglot import exp

from bench.bench_data import SPIDER, copy_spider
from bench.local_model_questions import Item, spider_hash
from catalog.analysis import AnalysisOptions
from catalog.registration import add_source
from catalog.sample_erp import build_sqlite
from core.config.settings import Settings
from core.store import migrate
from core.store.database import Store, open_store
from workers.catalog_refresh import refresh_source


def _installation(home: Path, paths: dict[str, Path]) -> Settings:
    """A store with `paths` registered and analysed (kept in `home`: a second run reuses it)."""
    settings = Settings(home=home)
    ready = home / "analysed"
    if ready.exists():
        kept = open_store(settings)
        migrate.upgrade(kept.engine)  # an installation kept from a run before a new migration
        kept.close()
        return settings
    store = open_store(settings)
    migrate.upgrade(store.engine)
    for name, path in paths.items():
        add_source(settings, store, name, f"sqlite:///{path}", [])
    settings = Settings(home=home)
    for name in paths:
        report = refresh_source(settings, store, name, AnalysisOptions())
        if report.analysis.error:
            raise SystemExit(f"analysis of {name} failed: {report.analysis.error}")
    store.close()
    ready.write_text("ok\n")
    return settings


def erp_installation(work: Path) -> tuple[Settings, dict[str, Path]]:
    home = work / "erp"
    sample = home / "sample"
    paths = {"erp": sample / "erp.sqlite", "billing": sample / "billing.sqlite"}
    if not (home / "analysed").exists():
        paths = build_sqlite(sample)
    return _installation(home, paths), paths


def spider_installation(work: Path) -> tuple[Settings, dict[str, Path]]:
    home = work / "spider"
    directory = home / "databases"
    paths = (
        {p.stem: p for p in sorted(directory.glob("*.sqlite"))}
        if (home / "analysed").exists()
        else copy_spider(directory)
    )
    return _installation(home, paths), paths


def example_half(index: int) -> bool:
    """Spider dev questions whose gold SQL is approved as a verified example: the upper half of the same hash that
    chooses the evaluated questions (which are the lowest hashes, so never among them)."""
    return spider_hash(index) >= "8"


def approve_spider_examples(store: Store, settings: Settings, items: Sequence[Item]) -> list[int]:
    """Approve the gold SQL of the example half as verified examples (none with an evaluated question's text);
    the ids, to delete after the run."""
    from core.store.repositories import catalog as catalog_repo
    from core.store.repositories import feedback as feedback_repo
    from core.store.repositories import sources as source_repo
    from search.encoders import embedder_for

    dev = json.loads((SPIDER / ".." / "dev.json").resolve().read_text())
    evaluated = {" ".join(i.text.lower().split()) for i in items if i.set == "spider"}
    chosen: list[tuple[str, str, str, list[str]]] = []
    with store.transaction() as session:
        for index, item in enumerate(dev):
            if not example_half(index) or " ".join(item["question"].lower().split()) in evaluated:
                continue
            source = source_repo.by_name(session, item["db_id"])
            if source is None:
                continue
            try:
                tree = sqlglot.parse_one(item["query"], read="sqlite")
            except sqlglot.errors.SqlglotError:
                continue
            names = {t.name.lower(): t.name for t in catalog_repo.tables_of(session, source.id)}
            read = list(dict.fromkeys(t.name.lower() for t in tree.find_all(exp.Table)))
            if read and all(t in names for t in read):
                chosen.append((item["question"], source.name, item["query"], [names[t] for t in read]))
    vectors = embedder_for(settings).embed([question for question, _, _, _ in chosen])
    ids = []
    with store.transaction() as session:
        for (question, database, sql, tables), vector in zip(chosen, vectors, strict=True):
            example = feedback_repo.add_example(
                session,
                turn_id=None,
                question=question,
                database=database,
                sql=sql,
                tables=tables,
                platform="slack",
                user_id="bench",
            )
            feedback_repo.review_example(session, example, "approved", "bench", {"embedding": vector.tolist()})
            ids.append(example.id)
    return ids


def delete_examples(store: Store, ids: Sequence[int]) -> None:
    from core.store.repositories import feedback as feedback_repo

    with store.transaction() as session:
        for example_id in ids:
            feedback_repo.delete_example(session, example_id)
