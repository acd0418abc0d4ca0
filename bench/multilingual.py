"""Questions in another script: the second vector space (search.multilingual) against the alternatives.

The 40 Korean questions about the sample ERP (bench/data/erp_korean.jsonl, with the tables each needs) through the
real search service, pooled over erp and billing and pinned to the question's database, three ways:

- as shipped: MiniLM's vectors, and the multilingual ones for a question in another script (the default install);
- MiniLM alone (`multilingual_vectors: false`, the build before);
- the multilingual encoder as the only one (`embedding_encoder: use-multilingual`, a multilingual default).

English questions are in Latin script, so as shipped they are searched exactly as by MiniLM alone; the English sets'
figures for the multilingual-only option come from `python -m bench.retrieval --step 6 --no-constants --encoder
use-multilingual --name retrieval_use-multilingual`, set beside the shipped ones of bench/results/retrieval.json.
Also the cost: seconds to analyse and index the sample ERP, and to make the second vectors after it.

Run:  python -m bench.multilingual   (writes bench/results/multilingual.json and multilingual.md)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

from bench.harness import Timer, current_run, machine_note, md_table, program, read_results, write_results
from bench.korean_erp import ErpInstall, korean_questions, recall
from bench.retrieval_report import recall_cells
from bench.retrieval_search import HYBRID
from catalog.analysis import AnalysisOptions
from catalog.registration import add_source
from core.access.permissions import Principal
from core.config.settings import Settings
from core.store import migrate
from core.store.database import Store, open_store
from core.store.repositories import sources as source_repo
from search.encoders import BiEncoderReranker, Embedder, make_embedder
from search.multilingual import index_multilingual
from search.service import Encoders, SearchRequest, search_tables
from workers.catalog_refresh import refresh_source

ENGLISH_SETS = ("Spider dev", "BIRD dev", "FIBEN", "BEAVER-NW")
SHIPPED = "tablescout (all)"
KS = (5, 10)
MODES = ("pooled", "pinned")  # of the Korean questions: every database searched, or the question's own
WAYS = {
    "shipped": "as shipped: MiniLM, and the multilingual vectors for a question in another script",
    "minilm": "MiniLM alone (multilingual_vectors: false; the build before)",
    "use": "the multilingual encoder alone (embedding_encoder: use-multilingual)",
}


def install(erp: ErpInstall, label: str, settings_values: dict[str, Any], embedder: Embedder) -> tuple[Store, float]:
    """The sample ERP in a new store database, analysed and indexed without the second vectors; its seconds."""
    admin = create_engine(erp.server.url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "bench_ml_{label}"'))
        conn.execute(text(f'CREATE DATABASE "bench_ml_{label}"'))
    admin.dispose()
    url = erp.server.url.set(database=f"bench_ml_{label}").render_as_string(hide_password=False)
    home = erp.work / f"home-{label}"
    values = {"home": home, "database_url": url, "multilingual_vectors": False, **settings_values}
    store = open_store(Settings(**values))
    migrate.upgrade(store.engine)
    for source, path in erp.paths.items():
        add_source(Settings(**values), store, source, f"sqlite:///{path}", [])
    with Timer() as indexing:
        for source in erp.paths:
            report = refresh_source(Settings(**values), store, source, AnalysisOptions(), embedder=embedder)
            if report.analysis.error:
                raise RuntimeError(f"{source}: {report.analysis.error}")
    return store, indexing.seconds


def rankings(store: Store, encoders: Encoders, pooled: bool) -> list[list[tuple[str, str]]]:
    found = []
    for asked in korean_questions():
        request = SearchRequest(asked.question, databases=[] if pooled else [asked.database], k=10, signals=HYBRID)
        with store.transaction() as session:
            result = search_tables(session, Principal.for_operator(), request, encoders, None)
        found.append([(c.database, c.table.lower()) for c in result.candidates])
    return found


def measure(encoders: Encoders, store: Store) -> dict[str, Any]:
    asked = korean_questions()
    return {
        "pooled": recall(rankings(store, encoders, True), asked),
        "pinned": recall(rankings(store, encoders, False), asked),
    }


def english() -> dict[str, Any]:
    """Per-database and pooled CR@5/CR@10 of the shipped search with MiniLM and with the multilingual encoder."""
    out: dict[str, Any] = {}
    for way, name in (("shipped", "retrieval"), ("use", "retrieval_use-multilingual")):
        sets = read_results(name).get("sets")
        if not sets:
            continue
        for title in ENGLISH_SETS:
            if title in sets:
                data = sets[title]
                out.setdefault(title, {})[way] = {
                    mode: {k: data[mode][SHIPPED][k] for k in ("CR@5", "CR@10")} for mode in ("per_database", "pooled")
                }
    return out


def main() -> int:
    current_run()
    argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0]).parse_args()
    work = Path(tempfile.mkdtemp(prefix="ts-bench-multilingual-"))
    erp = ErpInstall(work)
    results: dict[str, Any] = {"machine": machine_note(), "questions": len(korean_questions()), "korean": {}}
    try:
        minilm = make_embedder("minilm-int8", work / "models")
        second = make_embedder("use-multilingual", work / "models")
        store, seconds = install(erp, "minilm", {}, minilm)
        with Timer() as second_vectors:
            with store.transaction() as session:
                source_ids = [s.id for s in source_repo.all_sources(session)]
            made = sum(index_multilingual(store, source_id, second) for source_id in source_ids)
        results["cost"] = {
            "analyse_and_index_seconds": round(seconds, 2),
            "second_vectors_seconds": round(second_vectors.seconds, 2),
            "second_vectors": made,
        }
        reranker = BiEncoderReranker(minilm)
        results["korean"]["shipped"] = measure(Encoders(minilm, reranker, second), store)
        results["korean"]["minilm"] = measure(Encoders(minilm, reranker), store)
        store.close()
        store, _ = install(erp, "use", {"embedding_encoder": "use-multilingual"}, second)
        results["korean"]["use"] = measure(Encoders(second, BiEncoderReranker(second)), store)
        store.close()
    finally:
        erp.stop()
    results["english"] = english()
    write_results("multilingual", results, markdown(results))
    print(markdown(results))
    return 0


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        "# Questions in another script",
        "",
        f"Commit {m['commit']}, {m['when']}, {m['cores']} cores, load average {m['load_average']} at the start. "
        f"{results['questions']} Korean questions about the sample ERP (bench/data/erp_korean.jsonl), real search "
        "service, k = 10.",
        "",
    ]
    korean = [[label, *recall_cells(r, MODES, KS)] for way, label in WAYS.items() if (r := results["korean"].get(way))]
    lines += md_table(["way", *(f"{mode} CR@{k}" for mode in MODES for k in KS)], korean)
    cost = results.get("cost")
    if cost:
        lines += [
            "",
            f"Cost on the sample ERP: analysing and indexing {cost['analyse_and_index_seconds']} s; the second "
            f"vectors of its {cost['second_vectors']} chunks {cost['second_vectors_seconds']} s more.",
        ]
    if results.get("english"):
        lines += [
            "",
            "English sets (bench/results/retrieval.json and retrieval_use-multilingual.json, Spider and BIRD every "
            "6th question): as shipped an English question is searched by MiniLM alone.",
            "",
        ]
        english = [
            [title, WAYS[way], *recall_cells(r, ("per_database", "pooled"), KS)]
            for title, ways in results["english"].items()
            for way, r in ways.items()
        ]
        lines += md_table(["set", "way", *(f"{mode} CR@{k}" for mode in ("per-db", "pooled") for k in KS)], english)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
