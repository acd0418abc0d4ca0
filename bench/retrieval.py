"""Retrieval benchmark on Spider dev, BIRD dev, FIBEN and BEAVER-NW: CR@5/10/25 per database and pooled, with
ablations, and the copy trap (copies of every table injected).

Configurations, side by side in one run:
- the plain baselines: BM25 over table and column names (`bm25_baseline`, which every figure is compared with),
  dense over table names (the literature's baseline), keyword only (full text over split names);
- "hybrid before": meaning and words (ts_rank_cd) with none of the later signals, and each signal alone on top of
  it: segmentation, decomposition, join expansion, value matching, the BM25 keyword ranking, families, coverage;
- "last round": everything the build before BM25, families and coverage had;
- tablescout as shipped, and without each of BM25, families and coverage;
- hybrid + notes (BIRD: the `evidence` of the questions at even positions saved as notes on their gold tables,
  evaluated on those at odd positions, so no question sees its own note).
Each tuned constant is varied alone on every set (per database), and chosen leaving one set out: the value best on
the other sets is reported on the set left out. FIBEN is one database: per database equals pooled.

Run:  python bench/retrieval.py [--sets spider,bird,fiben,beaver] [--step N] [--encoder NAME] [--no-constants]
      (writes bench/results/retrieval.json and retrieval.md; --step N keeps every N-th question of Spider and BIRD)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_data import (  # noqa: E402
    Question,
    beaver_questions,
    build_bird,
    copy_beaver,
    copy_fiben,
    copy_spider,
    fiben_questions,
    inject_copies,
    questions,
)
from bm25_baseline import Bm25Baseline  # noqa: E402
from sqlalchemy import create_engine, func, text  # noqa: E402

import search.decomposition as decomposition  # noqa: E402
import search.families as families  # noqa: E402
import search.join_expansion as join_expansion  # noqa: E402
import search.service as search_service  # noqa: E402
from catalog.analysis import AnalysisOptions  # noqa: E402
from catalog.registration import add_source  # noqa: E402
from core.access.permissions import Principal  # noqa: E402
from core.config.settings import Settings  # noqa: E402
from core.store import migrate  # noqa: E402
from core.store.database import Store, open_store  # noqa: E402
from core.store.embedded import EmbeddedServer, start_embedded  # noqa: E402
from core.store.models import Note, NoteTable  # noqa: E402
from core.store.repositories import catalog as catalog_repo  # noqa: E402
from core.store.repositories import sources as source_repo  # noqa: E402
from core.text import name_words  # noqa: E402
from core.text.identifiers import humanise  # noqa: E402
from search.encoders import BiEncoderReranker, Embedder, Vectors, make_embedder  # noqa: E402
from search.indexing import index_note  # noqa: E402
from search.service import Encoders, SearchRequest, search_tables  # noqa: E402
from workers.catalog_refresh import refresh_source  # noqa: E402

RESULTS = REPO / "bench" / "results"
KS = (5, 10, 25)
HYBRID = frozenset({"semantic", "keyword"})
NEW_SIGNALS = ("decompose", "expand_joins", "values", "bm25", "families", "coverage")
OFF = dict.fromkeys(NEW_SIGNALS, False)
ALL = dict.fromkeys(NEW_SIGNALS, True)


@dataclass(frozen=True)
class Config:
    """A search configuration: the installation it runs on (names segmented or not), the request's switches and the
    tuned constants it holds at other values than shipped ((module, name, value))."""

    segmented: bool
    signals: frozenset[str] = HYBRID
    switches: tuple[tuple[str, bool], ...] = tuple(OFF.items())
    pinned: tuple[tuple[Any, str, Any], ...] = ()


def _switched(**on: bool) -> tuple[tuple[str, bool], ...]:
    return tuple((OFF | on).items())


FULL = Config(True, HYBRID, tuple(ALL.items()))
CONFIGS: dict[str, Config] = {
    "keyword only": Config(True, frozenset({"keyword"})),
    "hybrid before": Config(False),
    "+ segmentation only": Config(True),
    "+ decomposition only": Config(False, switches=_switched(decompose=True)),
    "+ join expansion only": Config(False, switches=_switched(expand_joins=True)),
    "+ value matching only": Config(False, switches=_switched(values=True)),
    "+ BM25 keyword ranking only": Config(False, switches=_switched(bm25=True)),
    "+ families only": Config(False, switches=_switched(families=True)),
    "+ coverage only": Config(False, switches=_switched(decompose=True, coverage=True)),
    "last round (no BM25, families, coverage)": Config(
        True,
        HYBRID,
        _switched(decompose=True, expand_joins=True, values=True),
        ((decomposition, "MAX_PHRASES", 3), (search_service, "PART_WEIGHT", 0.5)),
    ),
    "tablescout without BM25": Config(True, HYBRID, tuple((ALL | {"bm25": False}).items())),
    "tablescout without families": Config(True, HYBRID, tuple((ALL | {"families": False}).items())),
    "tablescout without coverage": Config(True, HYBRID, tuple((ALL | {"coverage": False}).items())),
    "tablescout (all)": FULL,
}
#: Tuned constants, each varied alone on every set with everything else as shipped: (module, name, values). Each is
#: chosen leaving one set out (`leave_one_out`).
CONSTANTS: tuple[tuple[Any, str, tuple[Any, ...]], ...] = (
    (families, "DEFER_AT", (10, 60)),
    (families, "TWIN_COLUMNS", (0.6, 0.9)),
    (decomposition, "MAX_PHRASES", (3, 9)),
    (search_service, "PART_WEIGHT", (0.125, 0.5)),
    (join_expansion, "LEADERS", (2, 4, 8)),
    (join_expansion, "HUB_DEGREE", (4, 10**6)),
    (join_expansion, "COLUMN_WORDS", (1, 3)),
    (join_expansion, "MAX_HOPS", (2,)),
    (join_expansion, "NEIGHBOURS_AT", (5, 12, None)),
    (search_service, "VALUE_WEIGHT", (0.5, 2.0)),
)


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
    # (search.multilingual; bench/multilingual.py measures them): not making them saves most of the set-up time.
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


def add_notes(inst: Installation, qs: Sequence[Question], embedder: CachedEmbedder) -> int:
    added = 0
    with inst.store.transaction() as session:
        for position, q in enumerate(qs):
            if position % 2 or not q.evidence.strip():
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


@contextmanager
def segmentation(on: bool) -> Iterator[None]:
    """Names segmented into words (as shipped) or split on separators and case only (as before)."""
    name_words.SEGMENT = on
    name_words.default_name_words.cache_clear()
    try:
        yield
    finally:
        name_words.SEGMENT = True
        name_words.default_name_words.cache_clear()


@contextmanager
def constant(module: Any, name: str, value: Any) -> Iterator[None]:
    before = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, before)


def copy_trap(
    inst: Installation, encoders: Encoders, qs: Sequence[Question], copies: dict[str, dict[str, str]]
) -> dict[str, Any]:
    ahead = considered = 0
    cr10 = 0.0
    for q in qs:
        ranked = service_ranking(inst, encoders, q, HYBRID, pooled=False, k=30)
        cr10 += capped_recall(ranked, gold_of(q), 10)
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


@dataclass
class BenchSet:
    label: str
    title: str
    paths: dict[str, Path]
    questions: list[Question]
    single_database: bool = False


def run_set(
    bench: BenchSet,
    server: EmbeddedServer,
    work: Path,
    embedder: CachedEmbedder,
    configs: dict[str, Config],
    constants: bool = False,
) -> dict[str, Any]:
    qs = bench.questions
    label = bench.label
    embedder.embed([q.question for q in qs])
    out: dict[str, Any] = {"questions": len(qs), "databases": len(bench.paths)}
    installs: dict[bool, Installation] = {}
    started = time.perf_counter()
    for segmented in sorted({c.segmented for c in configs.values()}, reverse=True):
        with segmentation(segmented):
            installs[segmented] = install(
                server, work / f"home-{label}-{int(segmented)}", f"{label}{int(segmented)}", bench.paths, embedder
            )
    out["setup_seconds"] = round(time.perf_counter() - started, 1)
    encoders = Encoders(embedder, BiEncoderReranker(embedder))
    index = names_index(installs[True], embedder)
    modes = (("per_database", False),) if bench.single_database else (("per_database", False), ("pooled", True))
    bm25 = Bm25Baseline(bench.paths)
    for mode, pooled in modes:
        rows: dict[str, Any] = {}

        def by_bm25(q: Question, p: bool = pooled) -> list[tuple[str, str]]:
            return bm25.ranking(q.question, q.db_id, p)

        rows["BM25 over names"] = evaluate(qs, by_bm25)

        def by_names(q: Question, p: bool = pooled) -> list[tuple[str, str]]:
            return names_ranking(index, embedder.embed([q.question])[0], q, p)

        rows["dense over table names"] = evaluate(qs, by_names)
        for name, config in configs.items():

            def by_service(q: Question, c: Config = config, p: bool = pooled) -> list[tuple[str, str]]:
                return service_ranking(installs[c.segmented], encoders, q, c.signals, p, switches=c.switches)

            started = time.perf_counter()
            with segmentation(config.segmented), ExitStack() as pins:
                for module, constant_name, value in config.pinned:
                    pins.enter_context(constant(module, constant_name, value))
                rows[name] = evaluate(qs, by_service)
            rows[name]["ms_per_question"] = round((time.perf_counter() - started) * 1000 / max(1, len(qs)), 1)
        out[mode] = rows
    if bench.single_database:
        out["pooled"] = out["per_database"]
    if constants:
        out["constants"] = {}
        for module, name, values in CONSTANTS:
            for value in values:

                def varied(q: Question) -> list[tuple[str, str]]:
                    return service_ranking(installs[True], encoders, q, HYBRID, False)

                shipped = getattr(module, name)
                with constant(module, name, value):
                    out["constants"][f"{name} = {value} (shipped {shipped})"] = evaluate(qs, varied) | {
                        "constant": name,
                        "value": value,
                        "shipped": shipped,
                    }
    held_out = qs[1::2]  # by position, so every N-th question (--step) still splits in two halves
    notes = add_notes(installs[True], qs, embedder) if any(q.evidence for q in qs) else 0
    if notes:
        out["notes"] = {"notes_added": notes}
        for mode, pooled in modes:
            out["notes"][mode] = {}
            for noted_config, signals in (
                ("tablescout (held-out half)", HYBRID),
                ("tablescout + notes (held-out half)", HYBRID | {"note"}),
            ):

                def noted(q: Question, s: frozenset[str] = signals, p: bool = pooled) -> list[tuple[str, str]]:
                    return service_ranking(installs[True], encoders, q, s, p)

                out["notes"][mode][noted_config] = evaluate(held_out, noted)
    for inst in installs.values():
        inst.store.close()
    trap_paths = {}
    copies = {}
    for db_id, path in bench.paths.items():
        target = work / f"trap-{label}" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
        copies[db_id] = inject_copies(target)
        trap_paths[db_id] = target
    trap = install(server, work / f"home-{label}-trap", f"{label}trap", trap_paths, embedder)
    out["copy_trap"] = copy_trap(trap, encoders, qs, copies)
    shipped = out["per_database"]["tablescout (all)"]["CR@10"]
    out["copy_trap"]["CR@10_without_copies"] = shipped
    out["copy_trap"]["CR@10_drop_points"] = round(100 * (shipped - out["copy_trap"]["CR@10_with_copies"]), 2)
    trap.store.close()
    return out


def measure(
    embedder: Embedder,
    sets: Sequence[str] = ("spider", "bird", "fiben", "beaver"),
    hybrid_only: bool = True,
    step: int = 1,
) -> dict[str, Any]:
    """Retrieval figures of one embedder on the named sets (for comparing encoders: only the shipped search when
    `hybrid_only`, else every configuration)."""
    work = Path(tempfile.mkdtemp(prefix="ts-bench-retrieval-"))
    server = start_embedded(work / "pgdata")
    cached = CachedEmbedder(embedder)
    configs = {"tablescout (all)": FULL} if hybrid_only else CONFIGS
    results: dict[str, Any] = {}
    try:
        for bench in bench_sets(work, sets, step):
            results[bench.title] = run_set(bench, server, work, cached, configs, constants=not hybrid_only)
    finally:
        server.stop()
    return results


def bench_sets(work: Path, sets: Sequence[str], step: int) -> Iterator[BenchSet]:
    for name in sets:
        if name == "spider":
            paths = copy_spider(work / "spider")
            yield BenchSet("spider", "Spider dev", paths, questions("Spider 1.0 dev", set(paths))[::step])
        elif name == "bird":
            paths = build_bird(work / "bird")
            yield BenchSet("bird", "BIRD dev", paths, questions("BIRD dev", set(paths))[::step])
        elif name == "fiben":
            yield BenchSet("fiben", "FIBEN", copy_fiben(work / "fiben"), fiben_questions(), single_database=True)
        elif name == "beaver":
            paths = copy_beaver(work / "beaver")
            yield BenchSet("beaver", "BEAVER-NW", paths, beaver_questions(set(paths)))
        else:
            raise SystemExit(f"unknown set {name!r}; choose among spider, bird, fiben, beaver")


def _row(config: str, per_db: dict[str, float], pooled: dict[str, float]) -> str:
    cells = [f"{r[f'CR@{k}']:.3f}" for r in (per_db, pooled) for k in KS]
    return f"| {config} | " + " | ".join(cells) + " |"


def leave_one_out(sets: dict[str, Any], metric: str = "CR@10") -> list[dict[str, Any]]:
    """For each tuned constant and each set left out: the value with the best mean `metric` (per database) on the
    other sets, and what that value gives on the set left out, beside the shipped value's figure there."""
    with_constants = {label: data for label, data in sets.items() if data.get("constants")}
    if len(with_constants) < 2:
        return []
    choices: dict[str, dict[Any, dict[str, float]]] = {}  # constant → value → set → figure
    for label, data in with_constants.items():
        for row in data["constants"].values():
            values = choices.setdefault(row["constant"], {})
            values.setdefault(row["value"], {})[label] = row[metric]
            values.setdefault(row["shipped"], {})[label] = data["per_database"]["tablescout (all)"][metric]
    found = []
    for constant, values in choices.items():
        shipped = next(
            row["shipped"]
            for data in with_constants.values()
            for row in data["constants"].values()
            if row["constant"] == constant
        )
        for held in with_constants:
            others = [label for label in with_constants if label != held]
            complete = {v: f for v, f in values.items() if all(label in f for label in [*others, held])}
            chosen = max(complete, key=lambda v: (sum(complete[v][o] for o in others), v == shipped))
            found.append(
                {
                    "constant": constant,
                    "held_out": held,
                    "chosen": chosen,
                    "shipped": shipped,
                    metric: complete[chosen][held],
                    f"{metric}_shipped": complete[shipped][held],
                }
            )
    return found


def _margin(data: dict[str, Any]) -> str:
    """tablescout (all) minus BM25 over names, each CR@k, per database and pooled."""
    cells = []
    for mode in ("per_database", "pooled"):
        ours, theirs = data[mode]["tablescout (all)"], data[mode]["BM25 over names"]
        margins = ", ".join(f"CR@{k} {ours[f'CR@{k}'] - theirs[f'CR@{k}']:+.3f}" for k in KS)
        cells.append(f"{mode.replace('_', ' ')} {margins}")
    return "Margin of tablescout (all) over BM25: " + "; ".join(cells) + "."


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Retrieval benchmark",
        "",
        f"Encoder {results.get('encoder')} ({results.get('model')}); Spider and BIRD: "
        + ("every question" if results.get("step", 1) == 1 else f"every {results.get('step')}th question (by index)")
        + "; FIBEN and BEAVER-NW: all questions (FIBEN is one database: pooled = per database); "
        f"{results.get('machine', '')}. CR@k = |top-k ∩ gold| / min(k, |gold|).",
        "",
    ]
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
        lines += ["", _margin(data)]
        per_db = data["per_database"]
        if "by_database" in per_db.get("tablescout (all)", {}):
            lines += ["", "Per database (the question's own database), tablescout (all) against BM25 over names:", ""]
            lines += ["| database | questions | CR@5 | CR@10 | CR@25 |", "|---|---|---|---|---|"]
            ours, theirs = per_db["tablescout (all)"]["by_database"], per_db["BM25 over names"]["by_database"]
            for db, row in ours.items():
                cells = [f"{row[f'CR@{k}']:.3f} vs {theirs[db][f'CR@{k}']:.3f}" for k in KS]
                lines.append(f"| {db} | {row['questions']} | " + " | ".join(cells) + " |")
        if data.get("constants"):
            lines += ["", "Tuned constants, each varied alone (everything else as shipped):", ""]
            lines += ["| constant | CR@5 | CR@10 | CR@25 |", "|---|---|---|---|"]
            shipped = data["per_database"]["tablescout (all)"]
            lines.append(f"| as shipped | {shipped['CR@5']:.3f} | {shipped['CR@10']:.3f} | {shipped['CR@25']:.3f} |")
            for name, row in data["constants"].items():
                lines.append(f"| {name} | {row['CR@5']:.3f} | {row['CR@10']:.3f} | {row['CR@25']:.3f} |")
        trap = data["copy_trap"]
        lines += [
            "",
            f"Copy trap: live table ahead of all its copies for {trap['live_ahead_share']:.2%} of "
            f"{trap['gold_tables_considered']} gold tables; CR@10 {trap['CR@10_without_copies']:.3f} → "
            f"{trap['CR@10_with_copies']:.3f} ({trap['CR@10_drop_points']:+.2f} points drop); copies detected "
            f"{trap['copies_detected']}/{trap['copies_injected']}.",
            "",
        ]
    chosen = leave_one_out(results["sets"])
    if chosen:
        lines += [
            "## Tuned constants, leaving one set out",
            "",
            "Each constant's value chosen by the best mean per-database CR@10 on the other sets, and what it gives on",
            "the set left out.",
            "",
            "| constant | set left out | chosen on the others | shipped | CR@10 chosen | CR@10 shipped |",
            "|---|---|---|---|---|---|",
        ]
        for row in chosen:
            lines.append(
                f"| {row['constant']} | {row['held_out']} | {row['chosen']} | {row['shipped']} | "
                f"{row['CR@10']:.3f} | {row['CR@10_shipped']:.3f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="spider,bird,fiben,beaver")
    parser.add_argument("--step", type=int, default=1, help="keep every N-th question of Spider and BIRD")
    parser.add_argument("--encoder", default=Settings().embedding_encoder)
    parser.add_argument("--limit", type=int, default=0, help="at most N questions per set (a quick check of the run)")
    parser.add_argument("--merge", action="store_true", help="keep the other sets of the results file")
    parser.add_argument("--no-constants", action="store_true", help="leave out the tuned constants' ablations")
    parser.add_argument("--name", default="retrieval", help="results file name under bench/results (without suffix)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ts-bench-retrieval-"))
    embedder = CachedEmbedder(make_embedder(args.encoder, work / "home"))
    results: dict[str, Any] = {
        "encoder": args.encoder,
        "model": embedder.name,
        "step": args.step,
        "machine": f"{os.cpu_count()} cores",
        "sets": {},
    }
    json_path, md_path = RESULTS / f"{args.name}.json", RESULTS / f"{args.name}.md"
    if args.merge and json_path.exists():
        results["sets"] = json.loads(json_path.read_text()).get("sets", {})
    server = start_embedded(work / "pgdata")
    try:
        for bench in bench_sets(work, args.sets.split(","), args.step):
            if args.limit:
                bench.questions = bench.questions[: args.limit]
            results["sets"][bench.title] = run_set(
                bench, server, work, embedder, CONFIGS, constants=not args.no_constants
            )
            RESULTS.mkdir(parents=True, exist_ok=True)  # written after each set, so a long run keeps what it has
            json_path.write_text(json.dumps(results, indent=2) + "\n")
            md_path.write_text(markdown(results))
    finally:
        server.stop()
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
