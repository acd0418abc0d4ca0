"""A benchmark set installed in a store and its questions ranked through the real search service: what the
retrieval benchmark (bench.retrieval) and the verified-examples benchmark share, with capped recall (CR@k).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import create_engine, text

from bench.bench_data import Question
from catalog.analysis import AnalysisOptions
from catalog.registration import add_source
from core.access.permissions import Principal
from core.config.settings import Settings
from core.store import migrate
from core.store.database import Store, open_store
from core.store.embedded import EmbeddedServer
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo
from core.text.identifiers import humanise
from search.encoders import Embedder, Vectors
from search.service import Encoders, SearchRequest, search_tables
from workers.catalog_refresh import refresh_source

KS = (5, 10, 25)
HYBRID = frozenset({"semantic", "keyword"})
#: The search request's switches of the signals added after "hybrid before" (all on as shipped).
NEW_SIGNALS = ("decompose", "expand_joins", "values", "bm25", "families", "coverage")
OFF = dict.fromkeys(NEW_SIGNALS, False)
ALL = dict.fromkeys(NEW_SIGNALS, True)


class CachedEmbedder:
    """The real embedder with a memo: every question is embedded once, however many configurations use it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for t, v in zip(missing, self.inner.embed(missing), strict=True):
                self.cache[t] = v
        if not texts:
            return self.inner.embed([])
        return np.stack([self.cache[t] for t in texts])


@dataclass
class Installation:
    settings: Settings
    store: Store
    names: dict[str, str] = field(default_factory=dict)  # source name → db_id


def install(
    server: EmbeddedServer, home: Path, label: str, paths: dict[str, Path], embedder: CachedEmbedder
) -> Installation:
    name = f"bench_{label}_{int(time.time() * 1000) % 10**8}"
    admin = create_engine(server.url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    url = server.url.set(database=name).render_as_string(hide_password=False)
    # The sets' questions are English (Latin script), which the second, multilingual vectors never serve
    # (search.multilingual; bench.multilingual measures them): not making them saves most of the set-up time.
    settings = Settings(home=home, database_url=url, multilingual_vectors=False)
    store = open_store(settings)
    migrate.upgrade(store.engine)
    installation = Installation(settings, store)
    for db_id, path in paths.items():
        source = db_id.replace(".", "_")[:63]
        add_source(installation.settings, store, source, f"sqlite:///{path}", [])
        installation.settings = Settings(home=home, database_url=url, multilingual_vectors=False)
        installation.names[source] = db_id
    for source in installation.names:
        report = refresh_source(installation.settings, store, source, AnalysisOptions(), embedder=embedder)
        if report.analysis.error:
            raise RuntimeError(f"{source}: {report.analysis.error}")
    return installation


def capped_recall(ranked: Sequence[tuple[str, str]], gold: set[tuple[str, str]], k: int) -> float:
    return len(set(ranked[:k]) & gold) / min(k, len(gold))


def gold_of(q: Question) -> set[tuple[str, str]]:
    return {(q.db_id, g.lower()) for g in q.gold}


def service_ranking(
    inst: Installation,
    encoders: Encoders,
    q: Question,
    signals: frozenset[str],
    pooled: bool,
    k: int = 25,
    riding: bool = False,
    switches: tuple[tuple[str, bool], ...] = tuple(ALL.items()),
) -> list[tuple[str, str]]:
    """Ranked (database, table) pairs; with `riding=True`, copies placed behind their live table are left out."""
    source = q.db_id.replace(".", "_")[:63]
    request = SearchRequest(q.question, databases=[] if pooled else [source], k=k, signals=signals)
    for switch, on in switches:
        setattr(request, switch, on)
    with inst.store.transaction() as session:
        result = search_tables(session, Principal.for_operator(), request, encoders, None)
    return [(inst.names[c.database], c.table.lower()) for c in result.candidates if not riding or not rides(c, result)]


def rides(candidate: Any, result: Any) -> bool:
    """A copy placed directly behind its live table shares that table's slot (see search.ordering.take_slots)."""
    if candidate.copy_of is None:
        return False
    before = result.candidates[: result.candidates.index(candidate)]
    return any(c.table == candidate.copy_of and c.database == candidate.database for c in before)


def names_index(inst: Installation, embedder: CachedEmbedder) -> list[tuple[str, str, np.ndarray]]:
    rows = []
    with inst.store.transaction() as session:
        for source in source_repo.all_sources(session):
            for table in catalog_repo.tables_of(session, source.id):
                rows.append((inst.names[source.name], table.name))
    vectors = embedder.inner.embed([humanise(t) for _, t in rows])
    return [(db, t.lower(), v) for (db, t), v in zip(rows, vectors, strict=True)]


def names_ranking(
    index: list[tuple[str, str, np.ndarray]], vector: np.ndarray, q: Question, pooled: bool
) -> list[tuple[str, str]]:
    pool = [(db, t, float(np.dot(v, vector))) for db, t, v in index if pooled or db == q.db_id]
    return [(db, t) for db, t, _ in sorted(pool, key=lambda x: -x[2])][:25]


def _averages(recalls: Sequence[dict[int, float]]) -> dict[str, Any]:
    return {f"CR@{k}": round(sum(r[k] for r in recalls) / max(1, len(recalls)), 4) for k in KS} | {
        "questions": len(recalls)
    }


def evaluate(qs: Sequence[Question], rank: Callable[[Question], list[tuple[str, str]]]) -> dict[str, Any]:
    """CR@k over the questions, and over each database's questions under `by_database` when there are several."""
    recalls: dict[str, list[dict[int, float]]] = {}
    for q in qs:
        ranked = rank(q)
        recalls.setdefault(q.db_id, []).append({k: capped_recall(ranked, gold_of(q), k) for k in KS})
    out = _averages([r for rs in recalls.values() for r in rs])
    if len(recalls) > 1:
        out["by_database"] = {db: _averages(rs) for db, rs in sorted(recalls.items())}
    return out
