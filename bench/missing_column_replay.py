"""The guided path's readings of a statement that failed on a column no table it reads has, replayed without a
model on the failed statements earlier runs of bench.local_model_accuracy recorded: a date function's argument read
from the one date column of the tables read (`workers.turns.date_arguments`), and an active flag's filter on a
table without that flag, which the question does not ask for, left out (`workers.turns.unknown_filters`).

Every recorded statement that failed is run again on its question's SQLite file to read the engine's own error;
where it names a column, each reading is tried with the cards (from the kept installations, `--work`) of the tables
the statement reads and the turn showed, the statement it gives is run, the answer checks' rewrite of periods
written as digits applied as the turn applies it, and the rows compared with the benchmark's. A reading turns a
failed statement into a right answer, a wrong one, or one that still fails; the statements the turn recorded
failed, so none of them was right before.

Run:  python -m bench.missing_column_replay --work DIR [RESULTS.json ...]
(default: every bench/results/local_model_accuracy_*.json; writes bench/results/missing_column_replay.json and .md).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.harness import RESULTS, current_run, md_table, program, write_results
from bench.local_model_checks import _probes
from bench.local_model_questions import ROW_CAP, Item, erp_items, run_readonly, spider_items
from core.config.settings import Settings
from core.store.database import open_store
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo
from workers.tools.base import SqlRecord
from workers.tools.sql_help import unknown_column
from workers.turns.answer_checks import check, tables_read
from workers.turns.date_arguments import dated_argument
from workers.turns.unknown_filters import without_unknown_filter

Reading = Callable[[str, str, Item, dict[str, dict[str, Any]]], Any]
READINGS: dict[str, Reading] = {
    "date argument": lambda sql, column, item, cards: dated_argument(sql, "sqlite", column, cards),
    "unasked filter": lambda sql, column, item, cards: without_unknown_filter(sql, "sqlite", column, item.text, cards),
}


def _cards(store: Any, database: str, sql: str, shown: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The cards of the tables the statement reads and of those the turn showed (`database.table` as recorded)."""
    cards: dict[str, dict[str, Any]] = {}
    names = [*tables_read(sql, "sqlite"), *(t.rsplit(".", 1)[-1] for t in shown if t.startswith(f"{database}."))]
    with store.transaction() as session:
        source = source_repo.by_name(session, database)
        for name in dict.fromkeys(names):
            table = catalog_repo.find_table(session, source.id, name) if source is not None else None
            if table is not None and table.card:
                cards[table.name.upper()] = table.card
    return cards


def _outcome(item: Item, db: Path, sql: str, cards: dict[str, dict[str, Any]]) -> str:
    """ "right", "wrong" or "fails" for the statement a reading gave, read as the turn reads it."""
    rows, error = run_readonly(db, sql)
    if error is None:
        record = SqlRecord(item.database, sql, [], rows, len(rows) >= ROW_CAP, None)
        redated = check(item.text, record, "sqlite", cards, [], _probes(db)).redated
        if redated is not None:
            rows, error = run_readonly(db, redated.sql)
    if error is not None:
        return "fails"
    right = item.check("", {"database": item.database, "rows": rows, "truncated": len(rows) >= ROW_CAP})
    return "right" if right else "wrong"


def replay(work: Path, files: Sequence[Path]) -> dict[str, Any]:
    counts: Counter[tuple[str, str, str]] = Counter()
    failed: Counter[str] = Counter()
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, int, str]] = set()
    for set_name in ("erp", "spider"):
        home = work / set_name
        paths = {p.stem: p for p in sorted(home.rglob("*.sqlite"))}
        items = erp_items(paths, 100) if set_name == "erp" else spider_items(paths, 10_000)
        by_key = {(i.set, i.id): i for i in items}
        store = open_store(Settings(home=home))
        try:
            for path in files:
                for row in json.loads(path.read_text()).get("questions", []):
                    item = by_key.get((row.get("set"), row.get("id")))
                    if item is None:
                        continue
                    attempts = [a for a in row.values() if isinstance(a, dict) and "sql" in a]
                    erred = [(r, a.get("tables") or []) for a in attempts for r in a["sql"] if r.get("error")]
                    for run, shown in erred:
                        sql = str(run["sql"]).split("\n-- for you:")[0]
                        if (item.set, item.id, sql) in seen:
                            continue
                        seen.add((item.set, item.id, sql))
                        db = paths[item.database]
                        column = unknown_column(run_readonly(db, sql)[1] or "")
                        if column is None:
                            continue
                        failed[item.set] += 1
                        cards = _cards(store, item.database, sql, shown)
                        for kind, reading in READINGS.items():
                            fixed = reading(sql, column, item, cards)
                            if fixed is None:
                                continue
                            outcome = _outcome(item, db, fixed.sql, cards)
                            counts[(item.set, kind, outcome)] += 1
                            found.append(
                                {"run": path.stem, "set": item.set, "id": item.id, "half": item.half}
                                | {"reading": kind, "outcome": outcome, "sql": sql, "fixed": fixed.sql}
                            )
        finally:
            store.close()
    summary = {
        f"{s} / {kind}": {"failed on a column": failed[s]}
        | {o: counts[(s, kind, o)] for o in ("right", "wrong", "fails")}
        for s in ("erp", "spider")
        for kind in READINGS
    }
    return {"files": [p.name for p in files], "summary": summary, "readings": found}


def _markdown(result: dict[str, Any]) -> str:
    rows = [[name, *figures.values()] for name, figures in result["summary"].items()]
    lines = [
        "# Statements that failed on a column, read again without a model (replayed)",
        "",
        __doc__.split("\n\n")[1],
        "",
        *md_table(["set / reading", "distinct failed statements", "→ right", "→ wrong", "→ still fails"], rows),
        "",
        "Readings:",
        "",
        *md_table(
            ["results", "set", "#", "half", "reading", "now", "statement"],
            [
                [r["run"], r["set"], r["id"], r["half"], r["reading"], r["outcome"], r["sql"][:100]]
                for r in result["readings"]
            ],
        ),
        "",
        f"Results replayed: {', '.join(result['files'])}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    current_run()
    parser = argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--work", type=Path, required=True, help="The kept installations of bench.local_model_accuracy."
    )
    parser.add_argument("results", nargs="*", type=Path)
    args = parser.parse_args()
    files = args.results or sorted(RESULTS.glob("local_model_accuracy_*.json"))
    result = replay(args.work, files)
    write_results("missing_column_replay", result, _markdown(result))
    print(_markdown(result))


if __name__ == "__main__":
    main()
