"""The guided path's answer checks (`workers.turns.answer_checks`) replayed on the statements earlier runs of
bench.local_model_accuracy recorded, without a model: how often a right answer would be doubted (a false doubt, which
costs a repair call and, if it stays, a `partial` answer), how often a wrong one is caught, how often a rewrite of
a literal turns a wrong answer right, and what the statement rewrites made without a model call (a grouping dropped,
periods written as digits read as digits, a filter nobody asked for left out) do to right and wrong answers. Cards
come from the kept installations (`--work`), the probes read the SQLite files themselves, and the expected rows are
the benchmark's own.

Run:  python -m bench.local_model_checks --work DIR RESULTS.json [RESULTS.json ...]
(writes bench/results/local_model_checks.json and .md).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.harness import current_run, md_table, program, write_results
from bench.local_model_questions import ROW_CAP, Item, erp_items, run_readonly, spider_items
from core.config.settings import Settings
from core.store.database import open_store
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo
from workers.tools.base import SqlRecord
from workers.turns.answer_checks import Probes, Verdict, check, tables_read
from workers.turns.guided_checks import rewrite


def _probes(path: Path) -> Probes:
    def held(table: str, column: str, literals: Sequence[str]) -> set[str]:
        marks = ", ".join("?" for _ in literals)
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            query = f'SELECT DISTINCT "{column}" FROM "{table}" WHERE "{column}" IN ({marks})'
            return {str(r[0]) for r in db.execute(query, list(literals))}

    def sample(table: str, column: str) -> list[str]:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            query = f'SELECT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL GROUP BY 1 LIMIT 300'
            return [str(r[0]) for r in db.execute(query)]

    return Probes(held, sample)


def main() -> None:
    current_run()
    parser = argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--work", type=Path, required=True, help="The kept installations of bench.local_model_accuracy."
    )
    parser.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args()
    outcomes: list[dict[str, Any]] = []
    for set_name in ("erp", "spider"):
        home = args.work / set_name
        paths = {p.stem: p for p in sorted(home.rglob("*.sqlite"))}
        items = erp_items(paths, 100) if set_name == "erp" else spider_items(paths, 10_000)
        by_key = {(i.set, i.id): i for i in items}
        store = open_store(Settings(home=home))
        try:
            outcomes += _replay(store, args.results, by_key, paths)
        finally:
            store.close()
    write_results("local_model_checks", {"outcomes": outcomes, "summary": _summary(outcomes)}, _markdown(outcomes))


def _replay(
    store: Any, results: Sequence[Path], items: dict[tuple[str, int], Item], paths: dict[str, Path]
) -> list[dict[str, Any]]:
    found = []
    for path in results:
        for row in json.loads(path.read_text())["questions"]:
            item = items.get((row["set"], row["id"]))
            for system, attempt in row.items():
                if item is None or not isinstance(attempt, dict) or "sql" not in attempt:
                    continue
                runs = [r for r in attempt["sql"] if not r.get("error")]
                if not runs or (runs[-1].get("database") or item.database) != item.database:
                    continue
                sql = runs[-1]["sql"].split("\n-- for you:")[0]
                rows, error = run_readonly(paths[item.database], sql)
                if error is not None:
                    continue
                found.append(_one(store, path.stem, system, item, sql, rows, paths[item.database]))
    return found


def _one(store: Any, run: str, system: str, item: Item, sql: str, rows: list[list[Any]], db: Path) -> dict[str, Any]:
    cards: dict[str, dict[str, Any]] = {}
    with store.transaction() as session:
        source = source_repo.by_name(session, item.database)
        for name in tables_read(sql, "sqlite"):
            table = catalog_repo.find_table(session, source.id, name) if source is not None else None
            if table is not None and table.card:
                cards[table.name.upper()] = table.card
    record = SqlRecord(item.database, sql, [], rows, len(rows) >= ROW_CAP, None)
    verdict = check(item.text, record, "sqlite", cards, [], _probes(db))
    correct = item.check("", {"database": item.database, "rows": rows, "truncated": len(rows) >= ROW_CAP})
    fixed = None
    if verdict.rewrites:
        again, error = run_readonly(db, rewrite(sql, "sqlite", verdict.rewrites))
        fixed = error is None and item.check("", {"database": item.database, "rows": again, "truncated": False})
    restated = _restated(item, verdict, cards, db)
    return {
        "run": run,
        "system": system,
        "set": item.set,
        "id": item.id,
        "correct": correct,
        "doubts": [d.kind for d in verdict.doubts],
        "say": [d.say for d in verdict.doubts],
        "rewrites": [[r.literal, r.value] for r in verdict.rewrites],
        "rewrite_right": fixed,
        "restated": restated,
    }


def _restated(item: Item, verdict: Verdict, cards: dict[str, dict[str, Any]], db: Path) -> dict[str, Any] | None:
    """The statement rewrite the guided path would adopt without a model call (`workers.turns.guided_checks`: the
    grouping dropped, periods written as digits read as digits, filters nobody asked for left out), and whether its
    result is right; None when none would be."""
    offered = [
        ("grouping", verdict.ungrouped, True),
        ("digits", verdict.redated.sql if verdict.redated else None, False),
        ("filter", verdict.unfiltered.sql if verdict.unfiltered else None, False),
    ]
    for kind, sql, equal_kept in offered:
        if sql is None:
            continue
        rows, error = run_readonly(db, sql)
        if error is not None or not rows or all(v in (None, 0) for v in rows[0]):
            continue
        record = SqlRecord(item.database, sql, [], rows, len(rows) >= ROW_CAP, None)
        after = len(check(item.text, record, "sqlite", cards, [], _probes(db)).doubts)
        if after < len(verdict.doubts) or (equal_kept and after <= len(verdict.doubts)):
            right = item.check("", {"database": item.database, "rows": rows, "truncated": len(rows) >= ROW_CAP})
            return {"kind": kind, "right": right}
    return None


def _summary(outcomes: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    summary: dict[str, dict[str, int]] = {}
    for o in outcomes:
        s = summary.setdefault(
            o["set"],
            dict.fromkeys(
                (
                    "statements",
                    "right",
                    "right_doubted",
                    "wrong",
                    "wrong_doubted",
                    "rewrites",
                    "rewrite_wrong_to_right",
                    "restated",
                    "restated_wrong_to_right",
                    "restated_right_to_wrong",
                ),
                0,
            ),
        )
        s["statements"] += 1
        s["right" if o["correct"] else "wrong"] += 1
        if o["doubts"]:
            s["right_doubted" if o["correct"] else "wrong_doubted"] += 1
        s["rewrites"] += bool(o["rewrites"])
        s["rewrite_wrong_to_right"] += bool(o["rewrites"]) and not o["correct"] and bool(o["rewrite_right"])
        restated = o.get("restated")
        if restated:
            s["restated"] += 1
            s["restated_wrong_to_right"] += not o["correct"] and restated["right"]
            s["restated_right_to_wrong"] += o["correct"] and not restated["right"]
    return summary


def _share(summary: dict[str, int], kind: str) -> str:
    return f"{summary[kind + '_doubted'] / summary[kind]:.0%}" if summary[kind] else "-"


def _markdown(outcomes: list[dict[str, Any]]) -> str:
    summary = _summary(outcomes)
    lines = [
        "# Answer checks replayed on recorded statements (no model)",
        "",
        "Every last statement that ran on the question's database in the given results of "
        "bench.local_model_accuracy, checked against its question as the guided path checks it (no value links "
        "from search). A doubt on a right answer is a false doubt; on a wrong one, a caught error.",
        "",
    ]
    header = [
        "set",
        "statements",
        "right",
        "right doubted",
        "wrong",
        "wrong doubted",
        "rewrites",
        "rewrite: wrong→right",
        "statement rewrites",
        "wrong→right",
        "right→wrong",
    ]
    keys = (
        "statements",
        "right",
        "right_doubted",
        "wrong",
        "wrong_doubted",
        "rewrites",
        "rewrite_wrong_to_right",
        "restated",
        "restated_wrong_to_right",
        "restated_right_to_wrong",
    )
    lines += md_table(
        [*header, "right doubted %", "wrong doubted %"],
        [[name, *(s[k] for k in keys), _share(s, "right"), _share(s, "wrong")] for name, s in summary.items()],
    )
    doubted = [o for o in outcomes if o["doubts"] or o["rewrites"] or o.get("restated")]
    lines += ["", "Statements the checks doubted or rewrote:", ""]
    rows = [
        [
            o["run"],
            o["system"],
            o["set"],
            o["id"],
            "✓" if o["correct"] else "✗",
            "; ".join(o["say"]) or "-",
            ", ".join(f"{a}→{b}" for a, b in o["rewrites"]) or "-",
            _restated_cell(o.get("restated")),
        ]
        for o in doubted
    ]
    lines += md_table(["results", "system", "set", "#", "right", "doubt", "rewrite", "statement rewrite"], rows)
    return "\n".join(lines) + "\n"


def _restated_cell(restated: dict[str, Any] | None) -> str:
    if not restated:
        return "-"
    return f"{restated['kind']}: " + ("✓" if restated["right"] else "✗")


if __name__ == "__main__":
    main()
