"""The search-latency benchmark's markdown report (bench.search_latency writes it beside the JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def render(result: dict[str, Any], modes: Sequence[tuple[str, str]]) -> str:
    """The results as a table of metric, value and target; `modes`: each latency mode's key and how it reads."""
    lat, idx, mem = result["latency_ms"], result["indexing"], result["memory_mb"]
    big = result["tables"] >= 100_000
    target = result["targets"]
    lines = [
        f"# Search latency at {result['tables']:,} tables",
        "",
        f"{result['cpus']} CPU cores; PostgreSQL {result['server']['postgresql']}, pgvector "
        f"{result['server']['extensions'].get('vector', '?')}; {result['queries']} Spider dev questions; query "
        "embedding included in the totals (and shown on its own).",
    ]
    if result.get("note"):
        lines += ["", result["note"]]
    lines += [
        "",
        "| metric | value | target |",
        "|---|---|---|",
        f"| tables / databases / chunks | {result['tables']:,} / {result['databases']} / {result['chunks']:,} | |",
    ]
    for mode, name in modes:
        if mode not in lat:
            continue
        row = lat[mode]
        p50 = "" if big else f"≤ {target['p50_ms']}"
        lines += [
            f"| search p50, {name} (ms) | {row['p50']} | {p50} |",
            f"| search p95, {name} (ms) | {row['p95']} | ≤ {target['p95_ms']} |",
            f"| of which question embedding p50 / p95 (ms) | {row['embedding_p50']} / {row['embedding_p95']} | |",
            f"| of which store and ranking p50 / p95 (ms) | {row['store_and_ranking_p50']} / "
            f"{row['store_and_ranking_p95']} | |",
            f"| statements per search | {row['statements_per_search']} | |",
        ]
    if idx:
        if big:
            minutes = idx.get("projected_seconds_with_encoder", idx["seconds"]) / 60
            lines.append(
                f"| indexing, projected with the encoder (min) | {minutes:.1f} | ≤ {target['indexing_minutes']} |"
            )
        elif idx.get("projected_seconds_with_encoder"):  # chunk vectors from words: the encoder's time added
            rate = round(result["tables"] / idx["projected_seconds_with_encoder"], 1)
            lines.append(
                f"| indexing, schema-only cards, projected with the encoder (tables/s) | {rate} | "
                f"≥ {target['indexing_tables_per_second']} |"
            )
        else:
            lines.append(
                f"| indexing, schema-only cards (tables/s) | {idx['tables_per_second']} | "
                f"≥ {target['indexing_tables_per_second']} |"
            )
        lines += [
            f"| indexing (chunks/s) | {idx['chunks_per_second']} | |",
            f"| indexing, store side only (tables/s; s) | {idx['store_side_tables_per_second']}; "
            f"{idx['store_side_seconds']} | |",
            f"| indexing, embedding (s; chunk vectors: {idx['chunk_vectors']}) | {idx['embedding_seconds']} | |",
        ]
        if idx.get("encoder"):
            enc = idx["encoder"]
            lines.append(
                f"| encoder alone on real chunks (chunks/s; tables/s) | {enc['chunks_per_second']}; "
                f"{enc['tables_per_second']} | |"
            )
    rss_target = f"≤ {target['worker_rss_mb']}" if big else ""
    lines += [
        f"| worker peak RSS while indexing (MB) | {mem['worker_peak_rss_indexing']} | {rss_target} |",
        f"| worker RSS while searching (MB) | {mem['worker_rss_searching']} | {rss_target} |",
        f"| store server memory, PSS (MB) | {mem['store_server_pss']} | |",
        f"| search_chunks with indexes and TOAST (MB) | {result['store']['search_chunks_total_mb']} | |",
    ]
    bulk = result.get("vector_index_bulk")
    if bulk:
        inc = bulk["incremental"]
        lines += [
            f"| end of the first run: vector index "
            f"{'built once' if bulk.get('set_aside', True) else 'kept row by row, checked'} over {bulk['chunks']:,} "
            f"chunks (s) | {bulk['seconds']} | |",
            f"| last database indexed with the index kept up to date: chunks; s; ms per chunk | {inc['chunks']:,}; "
            f"{inc['seconds']}; {inc['ms_per_chunk_all_included']} | |",
        ]
    return "\n".join(lines) + "\n"
