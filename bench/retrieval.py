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

Run:  python -m bench.retrieval [--sets spider,bird,fiben,beaver] [--step N] [--encoder NAME] [--no-constants]
      (--encoder: a product encoder, or `minilm-static`, the static word pieces of search.encoder_static)
      (writes bench/results/retrieval.json and retrieval.md; --step N keeps every N-th question of Spider and BIRD)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func

import search.decomposition as decomposition
import search.families as families
import search.join_expansion as join_expansion
import search.service as search_service
from bench.bench_data import (
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
from bench.bm25_baseline import Bm25Baseline
from bench.harness import Timer, current_run, program, read_results, write_results
from bench.retrieval_report import markdown
from bench.retrieval_search import (
    ALL,
    HYBRID,
    OFF,
    CachedEmbedder,
    Installation,
    capped_recall,
    evaluate,
    gold_of,
    install,
    names_index,
    names_ranking,
    service_ranking,
)
from core.config.settings import Settings
from core.store.embedded import EmbeddedServer, start_embedded
from core.store.models import Note, NoteTable
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo
from core.text import name_words
from search.encoders import ENCODERS, BiEncoderReranker, Embedder, make_embedder
from search.indexing import index_note
from search.service import Encoders


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
    with Timer() as setup:
        for segmented in sorted({c.segmented for c in configs.values()}, reverse=True):
            with segmentation(segmented):
                installs[segmented] = install(
                    server, work / f"home-{label}-{int(segmented)}", f"{label}{int(segmented)}", bench.paths, embedder
                )
    out["setup_seconds"] = round(setup.seconds, 1)
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

            with Timer() as timer, segmentation(config.segmented), ExitStack() as pins:
                for module, constant_name, value in config.pinned:
                    pins.enter_context(constant(module, constant_name, value))
                rows[name] = evaluate(qs, by_service)
            rows[name]["ms_per_question"] = round(timer.seconds * 1000 / max(1, len(qs)), 1)
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


def _embedder(encoder: str, home: Path) -> Embedder:
    """A product encoder (search.encoders) or one of the encoder benchmark's 384-dimension options (the static word
    pieces, `minilm-static`: the fast encoder of two-speed indexing, measured alone)."""
    if encoder in ENCODERS:
        return make_embedder(encoder, home)
    from bench.encoder_options import OPTIONS

    option = OPTIONS.get(encoder)
    if option is None or not option.in_store:
        known = [*ENCODERS, *(k for k, o in OPTIONS.items() if o.in_store and k not in ENCODERS)]
        raise SystemExit(f"unknown encoder {encoder!r}; choose among {', '.join(known)}")
    made: Embedder = option.make(home)
    return made


def main() -> int:
    current_run()
    parser = argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="spider,bird,fiben,beaver")
    parser.add_argument("--step", type=int, default=1, help="keep every N-th question of Spider and BIRD")
    parser.add_argument("--encoder", default=Settings().embedding_encoder)
    parser.add_argument("--limit", type=int, default=0, help="at most N questions per set (a quick check of the run)")
    parser.add_argument("--merge", action="store_true", help="keep the other sets of the results file")
    parser.add_argument("--no-constants", action="store_true", help="leave out the tuned constants' ablations")
    parser.add_argument("--name", default="retrieval", help="results file name under bench/results (without suffix)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ts-bench-retrieval-"))
    embedder = CachedEmbedder(_embedder(args.encoder, work / "home"))
    results: dict[str, Any] = {
        "encoder": args.encoder,
        "model": embedder.name,
        "step": args.step,
        "machine": f"{os.cpu_count()} cores",
        "sets": {},
    }
    if args.merge:
        results["sets"] = read_results(args.name).get("sets", {})
    server = start_embedded(work / "pgdata")
    try:
        for bench in bench_sets(work, args.sets.split(","), args.step):
            if args.limit:
                bench.questions = bench.questions[: args.limit]
            results["sets"][bench.title] = run_set(
                bench, server, work, embedder, CONFIGS, constants=not args.no_constants
            )
            write_results(args.name, results, markdown(results))  # after each set: a long run keeps what it has
    finally:
        server.stop()
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
