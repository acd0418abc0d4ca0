"""Retrieval benchmark on Spider dev and BIRD dev: CR@5/10/25 per database and pooled, with ablations, and the
copy trap (copies of every table injected).

Configurations, side by side in one run: dense over table names only (the literature's baseline), keyword only,
semantic only, hybrid (semantic + keyword), and hybrid + notes (BIRD: the `evidence` of even-numbered questions
saved as notes on their gold tables, evaluated on the odd-numbered questions, so no question sees its own note).

Run:  python bench/retrieval.py   (writes bench/results/retrieval.json and retrieval.md; about 10 minutes)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_data import Question, build_bird, copy_spider, inject_copies, questions  # noqa: E402
from sqlalchemy import create_engine, func, text  # noqa: E402

from catalog.analysis import AnalysisOptions  # noqa: E402
from catalog.registration import add_source  # noqa: E402
from core.identifiers import humanise  # noqa: E402
from core.permissions import Principal  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store import migrate  # noqa: E402
from core.store.database import Store, open_store  # noqa: E402
from core.store.embedded import EmbeddedServer, start_embedded  # noqa: E402
from core.store.models import Note, NoteTable  # noqa: E402
from core.store.repositories import catalog as catalog_repo  # noqa: E402
from core.store.repositories import sources as source_repo  # noqa: E402
from search.encoders import BiEncoderReranker, SentenceEmbedder, Vectors  # noqa: E402
from search.indexing import index_note  # noqa: E402
from search.service import Encoders, SearchRequest, search_tables  # noqa: E402
from workers.catalog_refresh import refresh_source  # noqa: E402

RESULTS = REPO / "bench" / "results"
KS = (5, 10, 25)
HYBRID = frozenset({"semantic", "keyword"})
CONFIGS: dict[str, frozenset[str]] = {
    "keyword only": frozenset({"keyword"}),
    "semantic only": frozenset({"semantic"}),
    "hybrid": HYBRID,
}


class CachedEmbedder:
    """The real embedder with a memo: every question is embedded once, however many configurations use it."""

    def __init__(self, inner: SentenceEmbedder) -> None:
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
    settings = Settings(home=home, database_url=url)
    store = open_store(settings)
    migrate.upgrade(store.engine)
    installation = Installation(settings, store)
    for db_id, path in paths.items():
        source = db_id.replace(".", "_")[:63]
        add_source(installation.settings, store, source, f"sqlite:///{path}", [])
        installation.settings = Settings(home=home, database_url=url)
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
) -> list[tuple[str, str]]:
    """Ranked (database, table) pairs; with `riding=False`, copies sharing their live table's slot are left out,
    so positions count slots (k counts tables, not their copies)."""
    source = q.db_id.replace(".", "_")[:63]
    request = SearchRequest(q.question, databases=[] if pooled else [source], k=k, signals=signals)
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


def evaluate(qs: Sequence[Question], rank: Callable[[Question], list[tuple[str, str]]]) -> dict[str, float]:
    sums = dict.fromkeys(KS, 0.0)
    for q in qs:
        ranked = rank(q)
        for k in KS:
            sums[k] += capped_recall(ranked, gold_of(q), k)
    return {f"CR@{k}": round(sums[k] / max(1, len(qs)), 4) for k in KS} | {"questions": len(qs)}


def add_notes(inst: Installation, qs: Sequence[Question], embedder: CachedEmbedder) -> int:
    added = 0
    with inst.store.transaction() as session:
        for q in qs:
            if q.idx % 2 or not q.evidence.strip():
                continue
            source = source_repo.by_name(session, q.db_id.replace(".", "_")[:63])
            assert source is not None
            for gold in q.gold:
                table = catalog_repo.find_table(session, source.id, gold)
                if table is None:
                    continue
                note = Note(
                    text=q.evidence, author_platform="slack", author_id="bench", tsv=func.to_tsvector("simple", "")
                )
                session.add(note)
                session.flush()
                session.add(NoteTable(note_id=note.id, table_id=table.id))
                index_note(session, note.id, q.evidence, embedder)
                added += 1
    return added


def copy_trap(
    inst: Installation, encoders: Encoders, qs: Sequence[Question], copies: dict[str, dict[str, str]]
) -> dict[str, Any]:
    ahead = considered = 0
    cr10 = 0.0
    for q in qs:
        ranked = service_ranking(inst, encoders, q, HYBRID, pooled=False, k=30, riding=True)
        cr10 += capped_recall(service_ranking(inst, encoders, q, HYBRID, pooled=False, k=10), gold_of(q), 10)
        for gold in q.gold:
            copy_names = {c.lower() for c, live in copies[q.db_id].items() if live.lower() == gold.lower()}
            positions = [i for i, (db, t) in enumerate(ranked) if db == q.db_id and t in copy_names]
            live = next((i for i, (db, t) in enumerate(ranked) if db == q.db_id and t == gold.lower()), None)
            if not positions and live is None:
                continue
            considered += 1
            if live is not None and all(live < p for p in positions):
                ahead += 1
    detected = 0
    with inst.store.transaction() as session:
        for source in source_repo.all_sources(session):
            rows = catalog_repo.tables_of(session, source.id)
            by_id = {r.id: r.name for r in rows}
            injected = copies[inst.names[source.name]]
            detected += sum(
                1 for r in rows if r.copy_of_id and injected.get(r.name, "").lower() == by_id[r.copy_of_id].lower()
            )
    return {
        "live_ahead_share": round(ahead / max(1, considered), 4),
        "gold_tables_considered": considered,
        "CR@10_with_copies": round(cr10 / max(1, len(qs)), 4),
        "copies_injected": sum(len(c) for c in copies.values()),
        "copies_detected": detected,
    }


def run_set(
    label: str, benchmark: str, paths: dict[str, Path], server: EmbeddedServer, work: Path, embedder: CachedEmbedder
) -> dict[str, Any]:
    qs = questions(benchmark, set(paths))
    embedder.embed([q.question for q in qs])
    started = time.perf_counter()
    inst = install(server, work / f"home-{label}", label, paths, embedder)
    setup_s = time.perf_counter() - started
    encoders = Encoders(embedder, BiEncoderReranker(embedder))
    out: dict[str, Any] = {"questions": len(qs), "databases": len(paths), "setup_seconds": round(setup_s, 1)}
    index = names_index(inst, embedder)
    for mode, pooled in (("per_database", False), ("pooled", True)):
        rows: dict[str, Any] = {}

        def by_names(q: Question, p: bool = pooled) -> list[tuple[str, str]]:
            return names_ranking(index, embedder.embed([q.question])[0], q, p)

        rows["dense over table names"] = evaluate(qs, by_names)
        for config, signals in CONFIGS.items():

            def by_service(q: Question, s: frozenset[str] = signals, p: bool = pooled) -> list[tuple[str, str]]:
                return service_ranking(inst, encoders, q, s, p)

            started = time.perf_counter()
            rows[config] = evaluate(qs, by_service)
            rows[config]["ms_per_question"] = round((time.perf_counter() - started) * 1000 / max(1, len(qs)), 1)
        out[mode] = rows
    held_out = [q for q in qs if q.idx % 2]
    notes = add_notes(inst, qs, embedder)
    if notes:
        out["notes"] = {"notes_added": notes}
        for mode, pooled in (("per_database", False), ("pooled", True)):
            out["notes"][mode] = {}
            for config, signals in (
                ("hybrid (held-out half)", HYBRID),
                ("hybrid + notes (held-out half)", HYBRID | {"note"}),
            ):

                def noted(q: Question, s: frozenset[str] = signals, p: bool = pooled) -> list[tuple[str, str]]:
                    return service_ranking(inst, encoders, q, s, p)

                out["notes"][mode][config] = evaluate(held_out, noted)
    inst.store.close()
    trap_paths = {}
    copies = {}
    for db_id, path in paths.items():
        target = work / f"trap-{label}" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
        copies[db_id] = inject_copies(target)
        trap_paths[db_id] = target
    trap = install(server, work / f"home-{label}-trap", f"{label}trap", trap_paths, embedder)
    out["copy_trap"] = copy_trap(trap, encoders, qs, copies)
    out["copy_trap"]["CR@10_without_copies"] = out["per_database"]["hybrid"]["CR@10"]
    out["copy_trap"]["CR@10_drop_points"] = round(
        100 * (out["per_database"]["hybrid"]["CR@10"] - out["copy_trap"]["CR@10_with_copies"]), 2
    )
    trap.store.close()
    return out


def _row(config: str, per_db: dict[str, float], pooled: dict[str, float]) -> str:
    cells = [f"{r[f'CR@{k}']:.3f}" for r in (per_db, pooled) for k in KS]
    return f"| {config} | " + " | ".join(cells) + " |"


def markdown(results: dict[str, Any]) -> str:
    lines = ["# Retrieval benchmark", ""]
    for label, data in results["sets"].items():
        lines += [f"## {label} ({data['questions']} questions, {data['databases']} databases)", ""]
        lines += [
            "| configuration | per-db CR@5 | per-db CR@10 | per-db CR@25 | pooled CR@5 | pooled CR@10 | pooled CR@25 |",
            "|---|---|---|---|---|---|---|",
        ]
        for config in data["per_database"]:
            a, b = data["per_database"][config], data["pooled"][config]
            lines.append(_row(config, a, b))
        if "notes" in data:
            for config in data["notes"]["per_database"]:
                a, b = data["notes"]["per_database"][config], data["notes"]["pooled"][config]
                lines.append(_row(config, a, b))
        trap = data["copy_trap"]
        lines += [
            "",
            f"Copy trap: live table ahead of all its copies for {trap['live_ahead_share']:.2%} of "
            f"{trap['gold_tables_considered']} gold tables; CR@10 {trap['CR@10_without_copies']:.3f} → "
            f"{trap['CR@10_with_copies']:.3f} ({trap['CR@10_drop_points']:+.2f} points drop); copies detected "
            f"{trap['copies_detected']}/{trap['copies_injected']}.",
            "",
        ]
    return "\n".join(lines)


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="ts-bench-retrieval-"))
    server = start_embedded(work / "pgdata")
    embedder = CachedEmbedder(SentenceEmbedder())
    results: dict[str, Any] = {"model": embedder.name, "sets": {}}
    try:
        results["sets"]["Spider dev"] = run_set(
            "spider", "Spider 1.0 dev", copy_spider(work / "spider"), server, work, embedder
        )
        results["sets"]["BIRD dev"] = run_set("bird", "BIRD dev", build_bird(work / "bird"), server, work, embedder)
    finally:
        server.stop()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "retrieval.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / "retrieval.md").write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
