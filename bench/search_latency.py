"""Search latency and indexing rate on a synthetic catalog of 10,000 tables (about 50,000 chunks).

The catalog is written straight into the metadata store as schema-only cards (names, types, keys), the way
`analyze --schema-only` leaves them, then indexed by the real indexing code. Latency is the whole
`search_tables` call including the query embedding (no cache), over Spider dev questions, both unpinned (every
database, with database selection) and pinned to one database.

Run:  python bench/search_latency.py [--tables 10000]   (writes bench/results/search_latency.json and .md)
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_data import questions  # noqa: E402

from core.permissions import Principal  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store import migrate  # noqa: E402
from core.store.database import open_store  # noqa: E402
from core.store.models import Source, SourceTable  # noqa: E402
from core.store.repositories import search_index  # noqa: E402
from search.encoders import BiEncoderReranker, SentenceEmbedder  # noqa: E402
from search.indexing import COMMON_WORD_MIN_CHUNKS, COMMON_WORD_SHARE, index_source  # noqa: E402
from search.service import Encoders, SearchRequest, search_tables  # noqa: E402

RESULTS = REPO / "bench" / "results"
ENTITIES = (
    "ORD",
    "CUST",
    "PRD",
    "INV",
    "PAY",
    "SHIP",
    "EMP",
    "DEPT",
    "STK",
    "WH",
    "VND",
    "PO",
    "GL",
    "ACCT",
    "AR",
    "AP",
    "BUDGET",
    "ASSET",
    "LEASE",
    "CONTRACT",
    "CLAIM",
    "POLICY",
    "TICKET",
    "CAMPAIGN",
    "LEAD",
    "STORE",
)
KINDS = ("MST", "DTL", "HDR", "HIST", "LOG", "SUM", "MAP", "CFG", "TXN", "SNAP")
COLUMN_WORDS = (
    "ID",
    "NO",
    "CD",
    "NM",
    "DT",
    "AMT",
    "QTY",
    "PRC",
    "STAT",
    "TYPE",
    "RSN",
    "REG",
    "UPD",
    "USE_YN",
    "DESC",
    "ADDR",
    "TEL",
    "EMAIL",
    "CITY",
    "RGN",
    "GRD",
    "BAL",
    "TOT",
    "CNT",
    "RATE",
    "SEQ",
    "FLAG",
)
TYPES = ("VARCHAR(20)", "VARCHAR(100)", "INTEGER", "NUMERIC(14, 2)", "DATE", "DATETIME", "CHAR(1)")


def synthetic_card(rng: random.Random, database: str, index: int) -> dict[str, Any]:
    entity = rng.choice(ENTITIES)
    name = f"{entity}_{rng.choice(KINDS)}_{index:05d}"
    width = rng.choice((12, 20, 35, 60, 140, 200))
    columns = [
        {
            "name": f"{entity}_ID",
            "type": "INTEGER",
            "family": "integer",
            "nullable": False,
            "key": "PK",
            "comment": None,
        }
    ]
    for position in range(1, width):
        word = f"{rng.choice(ENTITIES)}_{rng.choice(COLUMN_WORDS)}_{position}"
        columns.append(
            {"name": word, "type": rng.choice(TYPES), "family": "text", "nullable": True, "key": None, "comment": None}
        )
    return {
        "database": database,
        "schema": None,
        "table": name,
        "kind": "table",
        "role": "live",
        "copy_of": None,
        "purpose": name.replace("_", " ").lower(),
        "primary_key": [f"{entity}_ID"],
        "foreign_keys": [],
        "columns": columns,
        "watch": {},
        "joins": [],
        "row_count": None,
        "row_count_exact": False,
    }


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--databases", type=int, default=10)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--measure-only",
        type=Path,
        help="TABLESCOUT_HOME of an earlier run: migrate its store, refresh its search statistics and measure "
        "latency again, keeping the indexing figures of bench/results/search_latency.json",
    )
    args = parser.parse_args()
    rng = random.Random(11)
    home = args.measure_only or Path(tempfile.mkdtemp(prefix="ts-bench-latency-"))
    store = open_store(Settings(home=home))
    migrate.upgrade(store.engine)
    embedder = SentenceEmbedder()
    per_db = args.tables // args.databases
    indexing_seconds = 0.0
    chunks = 0
    source_ids = []
    previous: dict[str, Any] = {}
    if args.measure_only:
        previous = json.loads((RESULTS / "search_latency.json").read_text())
        with store.transaction() as session:
            for source in session.query(Source):
                search_index.set_chunk_count(session, source.id)
            search_index.refresh_common_words(session, COMMON_WORD_SHARE, COMMON_WORD_MIN_CHUNKS)
    for d in range(0 if args.measure_only else args.databases):
        with store.transaction() as session:
            source = Source(
                name=f"db{d:02d}", engine="synthetic", url_ref="synthetic", summary=f"synthetic database {d}"
            )
            session.add(source)
            session.flush()
            source_ids.append(source.id)
            for i in range(per_db):
                card = synthetic_card(rng, source.name, d * per_db + i)
                session.add(SourceTable(source_id=source.id, name=card["table"], card=card, card_text=card["purpose"]))
        with store.transaction() as session:
            started = time.perf_counter()
            report = index_source(session, source_ids[-1], f"synthetic database {d}", embedder)
            indexing_seconds += time.perf_counter() - started
            chunks += report.embedded
        print(f"indexed db{d:02d}: {report.tables} tables, {report.embedded} chunks", flush=True)
    encoders = Encoders(embedder, BiEncoderReranker(embedder))
    spider = [q.question for q in questions("Spider 1.0 dev", _spider_ids())][: args.queries]
    timings: dict[str, list[float]] = {"unpinned": [], "pinned": []}
    for question in spider[:10]:  # warm-up: first calls pay for lazy initialisation
        with store.transaction() as session:
            search_tables(session, Principal.for_operator(), SearchRequest(question), encoders, None)
    for question in spider:
        for mode, pins in (("unpinned", []), ("pinned", ["db03"])):
            started = time.perf_counter()
            with store.transaction() as session:
                search_tables(
                    session, Principal.for_operator(), SearchRequest(question, databases=pins), encoders, None
                )
            timings[mode].append((time.perf_counter() - started) * 1000)
    store.close()
    result = {
        "tables": per_db * args.databases,
        "chunks": chunks or previous.get("chunks"),
        "indexing_seconds": round(indexing_seconds, 1) if chunks else previous.get("indexing_seconds"),
        "indexing_tables_per_second": (
            round(per_db * args.databases / indexing_seconds, 1)
            if chunks
            else previous.get("indexing_tables_per_second")
        ),
        "indexing_chunks_per_second": (
            round(chunks / indexing_seconds, 1) if chunks else previous.get("indexing_chunks_per_second")
        ),
        "queries": len(spider),
        "latency_ms": {
            mode: {"p50": round(statistics.median(v), 1), "p95": round(percentile(v, 0.95), 1)}
            for mode, v in timings.items()
        },
        "targets": {"p50_ms": 30, "p95_ms": 80, "indexing_tables_per_second": 100},
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "search_latency.json").write_text(json.dumps(result, indent=2) + "\n")
    lat = result["latency_ms"]
    md = (
        "| metric | value | target |\n|---|---|---|\n"
        f"| tables / chunks | {result['tables']:,} / {result['chunks']:,} | 10,000 / ~50,000 |\n"
        f"| query embedding included, 2 CPU cores, {result['queries']} Spider dev questions | | |\n"
        f"| search p50, unpinned (ms) | {lat['unpinned']['p50']} | ≤ 30 |\n"
        f"| search p95, unpinned (ms) | {lat['unpinned']['p95']} | ≤ 80 |\n"
        f"| search p50, pinned to one database (ms) | {lat['pinned']['p50']} | ≤ 30 |\n"
        f"| search p95, pinned to one database (ms) | {lat['pinned']['p95']} | ≤ 80 |\n"
        f"| indexing, schema-only cards (tables/s) | {result['indexing_tables_per_second']} | ≥ 100 |\n"
        f"| indexing (chunks/s) | {result['indexing_chunks_per_second']} | |\n"
    )
    (RESULTS / "search_latency.md").write_text(md)
    print(md)
    return 0


def _spider_ids() -> set[str]:
    from bench_data import SPIDER

    return {p.name for p in SPIDER.iterdir() if (p / f"{p.name}.sqlite").exists()}


if __name__ == "__main__":
    sys.exit(main())
