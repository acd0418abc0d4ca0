"""Verified examples on BIRD dev: does an approved example of a similar question help table search find the tables
of a new one?

BIRD dev's questions are split in two halves by a fixed hash of the question id (SHA-256 of the id, lowest bit of
the first byte). The gold SQL of every question of the first half is approved as a verified example, exactly as an
admin's `tablescout examples approve` stores it (the same repository functions; the question embedded with the
same model), with the tables its SQL reads parsed with sqlglot (SQLite dialect, CTE names left out). The other half
is evaluated: capped recall (CR@5, CR@10) of tablescout's search (hybrid: semantic + keyword), per database (the
question pinned to its own database) and pooled (every BIRD table registered at once, nothing pinned), first
without any example, then with the approved examples, side by side, and CR@5 per BIRD database. No evaluated
question ever sees an example made from itself: the halves are disjoint, and an example whose question text equals
an evaluated question's is not approved either.

Answer accuracy with the local model is not measured here: BIRD's databases ship as schemas only in the shared
benchmark data (no rows), so no answer can be checked, and the local 1.5B model takes about 70 s a question on this
machine's two cores (see bench.local_model_accuracy for answer accuracy on the sample databases).

Run:  python -m bench.verified_examples   (writes bench/results/verified_examples.json and .md)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from bench.bench_data import SHARED, Question, build_bird, questions
from bench.harness import commit, current_run, md_table, program, uncommitted, write_results
from bench.retrieval_search import (
    HYBRID,
    CachedEmbedder,
    Installation,
    capped_recall,
    gold_of,
    install,
    service_ranking,
)
from core.access.permissions import Principal
from core.store.embedded import start_embedded
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import feedback as feedback_repo
from core.store.repositories import sources as source_repo
from search.encoders import BiEncoderReranker, SentenceEmbedder
from search.examples import examples_for
from search.service import Encoders

NAME = "verified_examples"
KS = (5, 10)
EXAMPLE_HALF, EVALUATED_HALF = 0, 1
REVIEWER = "operator:bench"


def half(question_id: int) -> int:
    """The fixed half a question falls in: the lowest bit of the first byte of SHA-256 of its id."""
    return hashlib.sha256(str(question_id).encode()).digest()[0] & 1


def tables_read(sql: str) -> list[str]:
    """The tables the SQL reads (sqlglot, SQLite dialect), CTE names left out, in first-seen order."""
    tree = sqlglot.parse_one(sql, read="sqlite")
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    found: list[str] = []
    for table in tree.find_all(exp.Table):
        name = table.name
        if name and name.lower() not in ctes and name.lower() not in (t.lower() for t in found):
            found.append(name)
    return found


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def approve_examples(inst: Installation, embedder: CachedEmbedder, evaluated: Sequence[Question]) -> dict[str, int]:
    """Approve the gold SQL of every question of the example half as a verified example; counts of what was done."""
    dev = json.loads((SHARED / "bird" / "dev.json").read_text())
    held_out = {_normal(q.question) for q in evaluated}
    counts = {"approved": 0, "unparsable_sql": 0, "no_catalog_table": 0, "same_text_as_an_evaluated_question": 0}
    chosen: list[tuple[dict[str, Any], str, list[str]]] = []
    with inst.store.transaction() as session:
        for item in dev:
            if half(int(item["question_id"])) != EXAMPLE_HALF:
                continue
            if _normal(item["question"]) in held_out:
                counts["same_text_as_an_evaluated_question"] += 1
                continue
            source = source_repo.by_name(session, str(item["db_id"]).replace(".", "_")[:63])
            assert source is not None
            try:
                read = tables_read(item["sql"])
            except sqlglot.errors.SqlglotError:
                counts["unparsable_sql"] += 1
                continue
            names = {t.name.lower(): t.name for t in catalog_repo.tables_of(session, source.id)}
            tables = [names[t.lower()] for t in read if t.lower() in names]
            if not tables or len(tables) != len(read):
                counts["no_catalog_table"] += 1
                continue
            chosen.append((item, source.name, tables))
        vectors = embedder.embed([item["question"] for item, _, _ in chosen])
        for (item, database, tables), vector in zip(chosen, vectors, strict=True):
            example = feedback_repo.add_example(
                session,
                turn_id=None,
                question=item["question"],
                database=database,
                sql=item["sql"],
                tables=tables,
                platform="slack",
                user_id="bench",
            )
            feedback_repo.review_example(session, example, "approved", REVIEWER, {"embedding": vector.tolist()})
            counts["approved"] += 1
    return counts


def measure(
    inst: Installation, encoders: Encoders, qs: Sequence[Question], pooled: bool
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """CR@k over `qs` and CR@5 per BIRD database."""
    sums = dict.fromkeys(KS, 0.0)
    per_db: dict[str, list[float]] = defaultdict(list)
    for q in qs:
        ranked = service_ranking(inst, encoders, q, HYBRID, pooled)
        for k in KS:
            sums[k] += capped_recall(ranked, gold_of(q), k)
        per_db[q.db_id].append(capped_recall(ranked, gold_of(q), 5))
    overall = {f"CR@{k}": round(sums[k] / max(1, len(qs)), 4) for k in KS}
    by_db = {db: {"CR@5": round(sum(v) / len(v), 4), "questions": len(v)} for db, v in sorted(per_db.items())}
    return overall, by_db


def example_reach(inst: Installation, embedder: CachedEmbedder, qs: Sequence[Question]) -> dict[str, float]:
    """How often an evaluated question gets an example at all (pooled), and how often the nearest example's tables
    include one of its gold tables."""
    with_hit = gold_hit = 0
    with inst.store.transaction() as session:
        databases = [s.name for s in source_repo.all_sources(session)]
        for q in qs:
            vector = embedder.embed([q.question])[0].tolist()
            hits = examples_for(session, Principal.for_operator(), vector, databases)
            if not hits:
                continue
            with_hit += 1
            nearest = hits[0]
            gold = {g.lower() for g in q.gold}
            if inst.names.get(nearest.database) == q.db_id and gold & {t.lower() for t in nearest.tables}:
                gold_hit += 1
    n = max(1, len(qs))
    return {"share_with_an_example": round(with_hit / n, 4), "share_nearest_reads_a_gold_table": round(gold_hit / n, 4)}


def markdown(results: dict[str, Any]) -> str:
    data = results["bird"]
    lines = [
        "# Verified examples on BIRD dev",
        "",
        f"{data['evaluated_questions']} evaluated questions (half {EVALUATED_HALF} of a fixed SHA-256 split of the "
        f"question ids); {data['examples']['approved']} examples approved from the other half's gold SQL "
        f"(tables parsed with sqlglot). Search: hybrid (semantic + keyword), embedder SentenceEmbedder() as in "
        f"bench/retrieval.py. Run {results['run_at']} at commit {results['commit']}{results['tree']}, "
        f"{results['minutes']} min{results['machine']}.",
        "",
    ]
    modes = []
    for mode in ("per_database", "pooled"):
        a, b = data[mode]["without"], data[mode]["with"]
        figures = (f"{r[f'CR@{k}']:.3f}" for k in KS for r in (a, b))
        modes.append([mode.replace("_", " "), *figures])
    lines += md_table(["mode", "CR@5 without", "CR@5 with examples", "CR@10 without", "CR@10 with examples"], modes)
    lines += ["", "CR@5 per BIRD database (pooled search: every BIRD table registered, nothing pinned):", ""]
    databases = [
        [db, without["questions"], f"{without['CR@5']:.3f}", f"{data['pooled']['per_db_with'][db]['CR@5']:.3f}"]
        for db, without in data["pooled"]["per_db_without"].items()
    ]
    lines += md_table(["database", "questions", "CR@5 without", "CR@5 with examples"], databases)
    reach = data["reach"]
    counts = data["examples"]
    lines += [
        "",
        f"An example at all (similarity ≥ the service's threshold) for {reach['share_with_an_example']:.1%} of the "
        f"evaluated questions; the nearest example reads one of the question's gold tables for "
        f"{reach['share_nearest_reads_a_gold_table']:.1%}.",
        f"Left out of the example half: {counts['unparsable_sql']} with SQL sqlglot could not parse, "
        f"{counts['no_catalog_table']} reading a table the catalog does not have, "
        f"{counts['same_text_as_an_evaluated_question']} with the same text as an evaluated question.",
        "",
        "Answer accuracy with the local model is not measured: BIRD's databases are schemas only in the shared "
        "benchmark data (no rows to check an answer against), and the local 1.5B model takes about 70 s a question "
        "on this machine's 2 CPU cores.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    run = current_run()
    argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0]).parse_args()
    work = Path(tempfile.mkdtemp(prefix="ts-bench-examples-"))
    server = start_embedded(work / "pgdata")
    embedder = CachedEmbedder(SentenceEmbedder())
    try:
        paths = build_bird(work / "bird")
        qs = questions("BIRD dev", set(paths))
        evaluated = [q for q in qs if half(q.idx) == EVALUATED_HALF]
        embedder.embed([q.question for q in evaluated])
        inst = install(server, work / "home", "examples", paths, embedder)
        encoders = Encoders(embedder, BiEncoderReranker(embedder))
        out: dict[str, Any] = {"evaluated_questions": len(evaluated), "databases": len(paths)}
        for mode, pooled in (("per_database", False), ("pooled", True)):
            overall, by_db = measure(inst, encoders, evaluated, pooled)
            out[mode] = {"without": overall, "per_db_without": by_db}
        out["examples"] = approve_examples(inst, embedder, evaluated)
        for mode, pooled in (("per_database", False), ("pooled", True)):
            overall, by_db = measure(inst, encoders, evaluated, pooled)
            out[mode] |= {"with": overall, "per_db_with": by_db}
        out["reach"] = example_reach(inst, embedder, evaluated)
        inst.store.close()
    finally:
        server.stop()
    busy, cores = os.getloadavg()[0], run.machine.cpus
    changed = uncommitted("search", "core", "catalog")
    results = {
        "model": embedder.name,
        "commit": commit(),
        "tree": " with uncommitted changes to search/core/catalog in the working tree" if changed else "",
        "run_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "minutes": run.minutes,
        "machine": f"; a shared {cores}-core machine, load average {busy:.1f} at the end "
        "(figures of quality, not speed)",
        "split": "sha256(str(question_id))[0] & 1; examples from half 0, evaluated on half 1",
        "bird": out,
    }
    write_results(NAME, results, markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
