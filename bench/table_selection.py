"""Table selection benchmark: which tables the guided path hands its SQL call (`workers.turns.selection.choose`),
measured against the tables each gold statement reads, with and without the coverage of the question's parts
(`COVER_PARTS`), beside plain BM25's best tables.

For each question of Spider dev, BIRD dev, FIBEN and BEAVER-NW: one search through the real search service with
the guided path's depth (`SEARCH_K`), pooled (every database of the set registered, nothing pinned) and per database
(pinned to the question's own), then the selection made from its candidates. Where more candidates than the SQL call
takes remain and none lead, the selection is the model's to narrow: its offered tables are counted, and such
questions are reported apart. Figures: every gold table selected (and the database right), the share of gold tables
selected, and the tables selected; BM25 with as many tables as the selection made (its best tables, pooled or in the
question's database). No constant is tuned here: the rule is measured off and on.

Run:  python -m bench.table_selection [--sets spider,bird,fiben,beaver] [--step N] [--name table_selection]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import workers.turns.selection as selection_rules
from bench.bench_data import Question
from bench.bm25_baseline import Bm25Baseline
from bench.harness import Timer, current_run, md_table, program, write_results
from bench.retrieval import bench_sets, constant
from bench.retrieval_search import CachedEmbedder, Installation, install
from core.access.permissions import Principal
from core.access.users import UserRef
from core.config.settings import Settings
from core.store.embedded import start_embedded
from search.encoders import BiEncoderReranker, make_embedder
from search.service import Encoders, SearchRequest, SearchResult, search_tables
from workers.tools.base import Conversation, ToolContext
from workers.turns.guided import SEARCH_K

MODES = ("pooled", "per database")
VARIANTS = {"without coverage": False, "with coverage": True}


def _context(session: Any, settings: Settings, encoders: Encoders, question: str) -> ToolContext:
    return ToolContext(
        session=session,
        settings=settings,
        principal=Principal.for_operator(),
        viewer=None,
        author=UserRef("slack", "U_BENCH"),
        conversation=Conversation("slack", "T1", "C1", "1.0", private=False),
        encoders=encoders,
        pins=[],
        user_texts=[question],
    )


def _selected(inst: Installation, encoders: Encoders, q: Question, result: SearchResult, cover: bool) -> dict[str, Any]:
    with inst.store.transaction() as session, constant(selection_rules, "COVER_PARTS", cover):
        chosen = selection_rules.choose(_context(session, inst.settings, encoders, q.question), q.question, result)
    database = inst.names.get(chosen.database, "")
    return {
        "database": database,
        "tables": sorted({t.name.lower() for t in chosen.tables}),
        "pick": chosen.needs_pick,
        "ambiguous": bool(chosen.ambiguous),
    }


def _score(q: Question, picked: dict[str, Any]) -> dict[str, float]:
    gold = {g.lower() for g in q.gold}
    got = set(picked["tables"]) if picked["database"] == q.db_id else set()
    return {"all": float(gold <= got), "share": len(gold & got) / max(1, len(gold)), "tables": len(picked["tables"])}


def _bm25_score(bm25: Bm25Baseline, q: Question, pooled: bool, k: int) -> dict[str, float]:
    gold = {(q.db_id, g.lower()) for g in q.gold}
    ranked = {(db, t.lower()) for db, t in bm25.ranking(q.question, q.db_id, pooled=pooled, k=max(1, k))}
    return {"all": float(gold <= ranked), "share": len(gold & ranked) / max(1, len(gold)), "tables": max(1, k)}


def _mean(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    n = max(1, len(rows))
    return {key: round(sum(r[key] for r in rows) / n, 4) for key in ("all", "share", "tables")}


def measure_set(label: str, paths: dict[str, Path], qs: Sequence[Question], work: Path, server: Any) -> dict[str, Any]:
    embedder = CachedEmbedder(make_embedder(Settings().embedding_encoder, work / "home"))
    embedder.embed([q.question for q in qs])
    with Timer() as setup:
        inst = install(server, work / f"home-{label}", label, paths, embedder)
    sources = {db_id: source for source, db_id in inst.names.items()}
    encoders = Encoders(embedder, BiEncoderReranker(embedder))
    bm25 = Bm25Baseline(paths)
    modes = MODES if len(paths) > 1 else MODES[1:]
    out: dict[str, Any] = {"questions": len(qs), "databases": len(paths), "modes": {}}
    for mode in modes:
        rows: dict[str, list[dict[str, float]]] = {v: [] for v in [*VARIANTS, "BM25"]}
        per_database: dict[str, dict[str, list[dict[str, float]]]] = {}
        changed: list[dict[str, Any]] = []
        picks = 0
        for q in qs:
            pins = [] if mode == "pooled" else [sources[q.db_id]]
            request = SearchRequest(q.question, databases=pins, k=SEARCH_K)
            with inst.store.transaction() as session:
                result = search_tables(session, Principal.for_operator(), request, encoders, None)
            picked = {v: _selected(inst, encoders, q, result, cover) for v, cover in VARIANTS.items()}
            picks += picked["with coverage"]["pick"]
            db_rows = per_database.setdefault(q.db_id, {v: [] for v in rows})
            for variant, p in picked.items():
                scored = _score(q, p)
                rows[variant].append(scored)
                db_rows[variant].append(scored)
            baseline = _bm25_score(bm25, q, mode == "pooled", len(picked["with coverage"]["tables"]))
            rows["BM25"].append(baseline)
            db_rows["BM25"].append(baseline)
            before, after = picked["without coverage"], picked["with coverage"]
            if before["tables"] != after["tables"]:
                changed.append(
                    {
                        "idx": q.idx,
                        "db_id": q.db_id,
                        "gold": sorted(g.lower() for g in q.gold),
                        "before": before["tables"],
                        "after": after["tables"],
                    }
                )
        out["modes"][mode] = {
            "figures": {variant: _mean(r) for variant, r in rows.items()},
            "model_picks": picks,
            "changed": len(changed),
            "changed_questions": changed,
            "per_database": {
                db: {variant: _mean(r) for variant, r in v.items()} | {"questions": len(v["BM25"])}
                for db, v in per_database.items()
            },
        }
    out["setup_seconds"] = round(setup.seconds, 1)
    inst.store.close()
    return out


def pooled_over_sets(sets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each mode's figures over the questions of every set measured in it (FIBEN, one database, is per database)."""
    out: dict[str, Any] = {}
    for mode in MODES:
        present = [s for s in sets.values() if mode in s["modes"]]
        total = sum(s["questions"] for s in present)
        if not total:
            continue
        figures = {}
        for variant in [*VARIANTS, "BM25"]:
            figures[variant] = {
                key: round(sum(s["modes"][mode]["figures"][variant][key] * s["questions"] for s in present) / total, 4)
                for key in ("all", "share", "tables")
            }
        out[mode] = {"questions": total, "figures": figures}
    return out


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Table selection: the tables the guided path hands its SQL call, against the gold statement's tables",
        "",
        f"Encoder {results['encoder']}; {results['machine']}; every {results['step']} question(s) of Spider and BIRD. "
        f"One search of depth {results['search_k']} per question, then `workers.turns.selection.choose`; 'all': "
        "every gold table selected in the right database; 'share': gold tables selected; 'tables': tables selected "
        "(BM25: its best tables, as many as the selection with coverage took). Where the model narrows the selection "
        "('model picks'), its offered tables are counted.",
        "",
    ]
    header = ["set", "mode", "questions", "variant", "all", "share", "tables", "model picks", "changed"]
    rows: list[list[Any]] = []
    for title, s in results["sets"].items():
        for mode, m in s["modes"].items():
            for variant, f in m["figures"].items():
                extra = [m["model_picks"], m["changed"]] if variant == "with coverage" else ["", ""]
                figures = [f"{f['all']:.3f}", f"{f['share']:.3f}", f"{f['tables']:.2f}"]
                rows.append([title, mode, s["questions"], variant, *figures, *extra])
    for mode, m in results["pooled"].items():
        for variant, f in m["figures"].items():
            rows.append(
                [
                    "all sets",
                    mode,
                    m["questions"],
                    variant,
                    f"{f['all']:.3f}",
                    f"{f['share']:.3f}",
                    f"{f['tables']:.2f}",
                    "",
                    "",
                ]
            )
    lines += md_table(header, rows)
    lines += ["", "Per database ('all' without coverage / with coverage / BM25):", ""]
    db_rows = []
    for title, s in results["sets"].items():
        for mode, m in s["modes"].items():
            for db, r in m["per_database"].items():
                db_rows.append([title, mode, db, r["questions"]] + [f"{r[v]['all']:.3f}" for v in [*VARIANTS, "BM25"]])
    lines += md_table(["set", "mode", "database", "questions", *VARIANTS, "BM25"], db_rows)
    return "\n".join(lines)


def main() -> int:
    current_run()
    parser = argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="spider,bird,fiben,beaver")
    parser.add_argument("--step", type=int, default=1, help="keep every N-th question of Spider and BIRD")
    parser.add_argument("--name", default="table_selection")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ts-bench-selection-"))
    results: dict[str, Any] = {
        "encoder": Settings().embedding_encoder,
        "machine": f"{os.cpu_count()} cores",
        "step": args.step,
        "search_k": SEARCH_K,
        "sets": {},
    }
    server = start_embedded(work / "pgdata")
    try:
        for bench in bench_sets(work, args.sets.split(","), args.step):
            results["sets"][bench.title] = measure_set(bench.label, bench.paths, bench.questions, work, server)
    finally:
        server.stop()
    results["pooled"] = pooled_over_sets(results["sets"])
    write_results(args.name, results, markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
