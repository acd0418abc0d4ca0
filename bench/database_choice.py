"""Database choice benchmark: with every database of a set registered and nothing pinned, how often the guided path
picks the question's own database (`workers.turns.database_choice`), beside plain BM25 over every table's names.

For each question of Spider dev, BIRD dev and BEAVER-NW (the sets of several databases), one pooled search through
the real search service; the database chosen from its candidates with `DATABASE_TABLES` at each value tried, and
BM25's (the database of its best table). The constant is chosen leaving one set out: the value best on the other
sets (mean of their accuracies) is reported on the set left out. Figures per set and pooled over all questions.

Run:  python -m bench.database_choice [--sets spider,bird,beaver] [--step N] [--name database_choice]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import workers.turns.database_choice as database_choice
from bench.bench_data import Question
from bench.bm25_baseline import Bm25Baseline
from bench.harness import Timer, current_run, md_table, program, write_results
from bench.retrieval import bench_sets, constant
from bench.retrieval_search import CachedEmbedder, install
from core.access.permissions import Principal
from core.config.settings import Settings
from core.store.embedded import start_embedded
from search.candidates import Candidate
from search.encoders import BiEncoderReranker, make_embedder
from search.service import Encoders, SearchRequest, search_tables

#: The values of `DATABASE_TABLES` tried (1: the database of the best candidate alone).
TRIED = (1, 2, 3, 4)


def chosen(candidates: Sequence[Candidate], names: dict[str, str], tables: int) -> str:
    with constant(database_choice, "DATABASE_TABLES", tables):
        order = database_choice.databases_ranked(candidates)
    return names.get(order[0], "") if order else ""


def measure_set(label: str, paths: dict[str, Path], qs: Sequence[Question], work: Path, server: Any) -> dict[str, Any]:
    embedder = CachedEmbedder(make_embedder(Settings().embedding_encoder, work / "home"))
    embedder.embed([q.question for q in qs])
    with Timer() as setup:
        inst = install(server, work / f"home-{label}", label, paths, embedder)
    encoders = Encoders(embedder, BiEncoderReranker(embedder))
    bm25 = Bm25Baseline(paths)
    right = dict.fromkeys(TRIED, 0)
    right_bm25 = 0
    per_database: dict[str, dict[str, int]] = {}
    for q in qs:
        request = SearchRequest(q.question, databases=[], k=30)
        with inst.store.transaction() as session:
            result = search_tables(session, Principal.for_operator(), request, encoders, None)
        row = per_database.setdefault(q.db_id, {"questions": 0, "bm25": 0} | {str(t): 0 for t in TRIED})
        row["questions"] += 1
        for tables in TRIED:
            hit = chosen(result.candidates, inst.names, tables) == q.db_id
            right[tables] += hit
            row[str(tables)] += hit
        ranked = bm25.ranking(q.question, q.db_id, pooled=True, k=1)
        hit_bm25 = bool(ranked) and ranked[0][0] == q.db_id
        right_bm25 += hit_bm25
        row["bm25"] += hit_bm25
    inst.store.close()
    n = max(1, len(qs))
    return {
        "questions": len(qs),
        "databases": len(paths),
        "setup_seconds": round(setup.seconds, 1),
        "accuracy": {str(t): round(right[t] / n, 4) for t in TRIED},
        "bm25": round(right_bm25 / n, 4),
        "per_database": per_database,
    }


def leave_one_out(sets: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """For each set: the value best on the others (mean accuracy; ties to the smaller value) and its figure here."""
    out = {}
    for left in sets:
        others = [s for s in sets if s != left]
        if not others:
            continue
        best = max(TRIED, key=lambda t: (sum(sets[o]["accuracy"][str(t)] for o in others) / len(others), -t))
        out[left] = {"chosen_on_others": best, "accuracy": sets[left]["accuracy"][str(best)]}
    return out


def markdown(results: dict[str, Any]) -> str:
    sets = results["sets"]
    lines = [
        "# Database choice: the question's own database picked from a pooled search, nothing pinned",
        "",
        f"Encoder {results['encoder']}; {results['machine']}. One pooled search (k=30) per question; the database "
        "ranked first by `workers.turns.database_choice` with `DATABASE_TABLES` at each value, and the database of "
        "plain BM25's best table (over every table's names and columns).",
        "",
    ]
    header = ["set", "questions", "databases", "BM25", *[f"tables={t}" for t in TRIED], "chosen leaving it out"]
    rows = []
    for title, s in sets.items():
        loo = results["leave_one_out"].get(title, {})
        shown = f"{loo['chosen_on_others']}: {loo['accuracy']:.3f}" if loo else "-"
        rows.append(
            [title, s["questions"], s["databases"], f"{s['bm25']:.3f}"]
            + [f"{s['accuracy'][str(t)]:.3f}" for t in TRIED]
            + [shown]
        )
    pooled = results["pooled"]
    rows.append(
        ["all sets pooled", pooled["questions"], pooled["databases"], f"{pooled['bm25']:.3f}"]
        + [f"{pooled['accuracy'][str(t)]:.3f}" for t in TRIED]
        + ["-"]
    )
    lines += md_table(header, rows)
    lines += ["", "Per database (questions; right with BM25, and with each value):", ""]
    db_rows = []
    for title, s in sets.items():
        for db, r in s["per_database"].items():
            db_rows.append([title, db, r["questions"], r["bm25"], *[r[str(t)] for t in TRIED]])
    lines += md_table(["set", "database", "questions", "BM25", *[f"tables={t}" for t in TRIED]], db_rows)
    return "\n".join(lines)


def main() -> int:
    current_run()
    parser = argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="spider,bird,beaver")
    parser.add_argument("--step", type=int, default=1, help="keep every N-th question of Spider and BIRD")
    parser.add_argument("--name", default="database_choice")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ts-bench-dbchoice-"))
    results: dict[str, Any] = {
        "encoder": Settings().embedding_encoder,
        "machine": f"{os.cpu_count()} cores",
        "step": args.step,
        "tried": list(TRIED),
        "sets": {},
    }
    server = start_embedded(work / "pgdata")
    try:
        for bench in bench_sets(work, args.sets.split(","), args.step):
            results["sets"][bench.title] = measure_set(bench.label, bench.paths, bench.questions, work, server)
    finally:
        server.stop()
    total = sum(s["questions"] for s in results["sets"].values())
    results["pooled"] = {
        "questions": total,
        "databases": sum(s["databases"] for s in results["sets"].values()),
        "bm25": round(sum(s["bm25"] * s["questions"] for s in results["sets"].values()) / max(1, total), 4),
        "accuracy": {
            str(t): round(
                sum(s["accuracy"][str(t)] * s["questions"] for s in results["sets"].values()) / max(1, total), 4
            )
            for t in TRIED
        },
    }
    results["leave_one_out"] = leave_one_out(results["sets"])
    write_results(args.name, results, markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
