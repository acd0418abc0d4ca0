"""The retrieval benchmark's report: its markdown tables, the margin over BM25, and each tuned constant chosen
leaving one set out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.harness import md_table
from bench.retrieval_search import KS


def recall_cells(figures: Mapping[str, Mapping[str, float]], modes: Sequence[str], ks: Sequence[int] = KS) -> list[str]:
    """CR@k of each mode (`per_database`, `pooled`, ...) to three decimals: every k of the first mode, then the next."""
    return [f"{figures[mode][f'CR@{k}']:.3f}" for mode in modes for k in ks]


def _row(config: str, per_db: dict[str, float], pooled: dict[str, float]) -> list[str]:
    return [config, *recall_cells({"per_database": per_db, "pooled": pooled}, ("per_database", "pooled"))]


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
        rows = [_row(config, data["per_database"][config], data["pooled"][config]) for config in data["per_database"]]
        if "notes" in data:
            notes = data["notes"]
            rows += [
                _row(config, notes["per_database"][config], notes["pooled"][config]) for config in notes["per_database"]
            ]
        lines += md_table(["configuration", *(f"{mode} CR@{k}" for mode in ("per-db", "pooled") for k in KS)], rows)
        lines += ["", _margin(data)]
        per_db = data["per_database"]
        if "by_database" in per_db.get("tablescout (all)", {}):
            lines += ["", "Per database (the question's own database), tablescout (all) against BM25 over names:", ""]
            ours, theirs = per_db["tablescout (all)"]["by_database"], per_db["BM25 over names"]["by_database"]
            rows = [
                [db, row["questions"], *(f"{row[f'CR@{k}']:.3f} vs {theirs[db][f'CR@{k}']:.3f}" for k in KS)]
                for db, row in ours.items()
            ]
            lines += md_table(["database", "questions", *(f"CR@{k}" for k in KS)], rows)
        if data.get("constants"):
            lines += ["", "Tuned constants, each varied alone (everything else as shipped):", ""]
            varied = {"as shipped": data["per_database"]["tablescout (all)"], **data["constants"]}
            rows = [[name, *(f"{row[f'CR@{k}']:.3f}" for k in KS)] for name, row in varied.items()]
            lines += md_table(["constant", *(f"CR@{k}" for k in KS)], rows)
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
        ]
        rows = [
            [r["constant"], r["held_out"], r["chosen"], r["shipped"], f"{r['CR@10']:.3f}", f"{r['CR@10_shipped']:.3f}"]
            for r in chosen
        ]
        header = ["constant", "set left out", "chosen on the others", "shipped", "CR@10 chosen", "CR@10 shipped"]
        lines += [*md_table(header, rows), ""]
    return "\n".join(lines)
