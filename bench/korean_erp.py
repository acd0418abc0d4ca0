"""The 40 Korean questions about the sample ERP (bench/data/erp_korean.jsonl, with the tables each needs) and the
sample ERP installed once per encoder, ranked through the real search service or by dense vectors in memory: what
the encoder and multilingual benchmarks share.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

from bench.encoder_options import embed_questions
from bench.harness import REPO
from bench.retrieval_search import capped_recall
from core.access.permissions import Principal
from core.config.settings import Settings
from search.encoders import Embedder

KOREAN = REPO / "bench" / "data" / "erp_korean.jsonl"
#: A ranking: (database, table in lower case), best first.
Ranking = list[tuple[str, str]]


@dataclass(frozen=True)
class Asked:
    database: str
    question: str
    tables: frozenset[str]


def korean_questions() -> list[Asked]:
    found = []
    for line in KOREAN.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            found.append(Asked(item["database"], item["question"], frozenset(t.lower() for t in item["tables"])))
    return found


def recall(rankings: Sequence[Sequence[tuple[str, str]]], asked: Sequence[Asked]) -> dict[str, float]:
    out = {}
    for k in (5, 10):
        values = [
            capped_recall(r, {(a.database, t) for t in a.tables}, k) for r, a in zip(rankings, asked, strict=True)
        ]
        out[f"CR@{k}"] = round(sum(values) / len(values), 3)
    return out


class ErpInstall:
    """The sample ERP (erp and billing) registered, analysed and indexed in one store database per embedder."""

    def __init__(self, work: Path) -> None:
        from catalog import sample_erp
        from core.store.embedded import start_embedded

        self.work = work
        self.server = start_embedded(work / "pgdata")
        self.paths = sample_erp.build_sqlite(work / "sample")
        self.count = 0

    def install(self, embedder: Any) -> Any:
        from catalog.analysis import AnalysisOptions
        from catalog.registration import add_source
        from core.store import migrate
        from core.store.database import open_store
        from workers.catalog_refresh import refresh_source

        self.count += 1
        name = f"bench_encoders_{self.count}"
        admin = create_engine(self.server.url.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        url = self.server.url.set(database=name).render_as_string(hide_password=False)
        home = self.work / name
        settings = Settings(home=home, database_url=url)
        store = open_store(settings)
        migrate.upgrade(store.engine)
        for source, path in self.paths.items():
            add_source(settings, store, source, f"sqlite:///{path}", [])
        settings = Settings(home=home, database_url=url)
        for source in self.paths:
            report = refresh_source(settings, store, source, AnalysisOptions(), embedder=embedder)
            if report.analysis.error:
                raise RuntimeError(f"{source}: {report.analysis.error}")
        return store

    def cards(self, store: Any) -> list[tuple[str, str, dict[str, Any]]]:
        from core.store.repositories import catalog as catalog_repo
        from core.store.repositories import sources as source_repo

        found = []
        with store.transaction() as session:
            for source in source_repo.all_sources(session):
                for table in catalog_repo.tables_of(session, source.id):
                    if table.card is not None:
                        found.append((source.name, table.name.lower(), table.card))
        return found

    def stop(self) -> None:
        self.server.stop()


def service_rankings(
    store: Any, embedder: Embedder, asked: Sequence[Asked], signals: frozenset[str], pooled: bool
) -> list[Ranking]:
    from search.encoders import BiEncoderReranker
    from search.service import Encoders, SearchRequest, search_tables

    encoders = Encoders(embedder, BiEncoderReranker(embedder))
    rankings = []
    for a in asked:
        request = SearchRequest(a.question, databases=[] if pooled else [a.database], k=10, signals=signals)
        with store.transaction() as session:
            result = search_tables(session, Principal.for_operator(), request, encoders, None)
        rankings.append([(c.database, c.table.lower()) for c in result.candidates])
    return rankings


def dense_rankings(
    embedder: Any, cards: Sequence[tuple[str, str, dict[str, Any]]], asked: Sequence[Asked]
) -> list[Ranking]:
    from search.chunking import chunks_for

    owners, texts = [], []
    for database, table, card in cards:
        for chunk in chunks_for(card):
            owners.append((database, table))
            texts.append(chunk.text)
    chunk_vectors = embedder.embed(texts)
    question_vectors = embed_questions(embedder, [a.question for a in asked])
    rankings = []
    for q in question_vectors:
        best: dict[tuple[str, str], float] = {}
        for owner, score in zip(owners, chunk_vectors @ q, strict=True):
            best[owner] = max(best.get(owner, -1.0), float(score))
        rankings.append(sorted(best, key=lambda o: -best[o]))
    return rankings
