"""The guided path's pruning of unneeded joins (`workers.turns.join_pruning`) replayed on the statements earlier runs
of bench.local_model_accuracy recorded for Spider dev, without a model: which answers it turns right or wrong.

For each recorded guided answer, the candidates the turn wrote (as they ran) are run again on the question's SQLite
file, once as recorded and once through today's pruning, and the answer is chosen among them as the turn chooses it
(`workers.turns.candidates`: sampling stops where two agree, a result with rows first, then the most votes, then
the model's most likely statement). The tables a statement names are described to the pruning from the SQLite
file's own schema (columns and primary key), as their cards describe them. Reported per hash half of the questions
(the tuning half and the held-out half of bench.local_model_accuracy): answers right before and after, turned
right, turned wrong. Statements recorded before a rule existed ran without it, so a change of the rule shows as
the answers it turns.

Run:  python -m bench.join_pruning_replay [RESULTS.json ...]
(default: every bench/results/local_model_accuracy_*.json with Spider questions; writes
bench/results/join_pruning_replay.json and .md).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.bench_data import SPIDER
from bench.harness import RESULTS, current_run, md_table, program, write_results
from bench.local_model_questions import ROW_CAP, SpiderQuestion, run_readonly, same_result, spider_questions
from workers.tools.base import SqlRecord
from workers.turns.candidates import choose, result_key
from workers.turns.join_pruning import Shown, without_unneeded_joins


def shown_tables(path: Path) -> dict[str, Shown]:
    """Every table of a SQLite file as the pruning reads it: its columns and primary key, in lower case."""
    found: dict[str, Shown] = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            info = list(db.execute(f'PRAGMA table_info("{name}")'))
            found[name.upper()] = Shown(
                frozenset(str(r[1]).lower() for r in info), frozenset(str(r[1]).lower() for r in info if r[5])
            )
    return found


def _record(database: str, path: Path, sql: str) -> SqlRecord:
    rows, error = run_readonly(path, sql)
    width = len(rows[0]) if rows else 0
    return SqlRecord(database, sql, [f"c{i}" for i in range(width)], rows, len(rows) >= ROW_CAP, error)


def _chosen(records: Sequence[SqlRecord]) -> SqlRecord:
    """The answer among candidates written in this order, sampling stopped where two agreed (as the turn does)."""
    written: list[SqlRecord | None] = []
    seen: set[tuple[int, tuple[str, ...]]] = set()
    for record in records:
        written.append(record)
        if record.error is None:
            if result_key(record) in seen:
                break
            seen.add(result_key(record))
    return choose(records[0], written).record


def _attempts(files: Sequence[Path]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    for path in files:
        for row in json.loads(path.read_text()).get("questions", []):
            attempt = row.get("guided")
            if row.get("set") == "spider" and isinstance(attempt, dict) and attempt.get("sql"):
                yield path.stem, int(row["id"]), attempt


def replay(files: Sequence[Path]) -> dict[str, Any]:
    paths = {p.name: p / f"{p.name}.sqlite" for p in SPIDER.iterdir() if (p / f"{p.name}.sqlite").exists()}
    questions: dict[int, SpiderQuestion] = {q.id: q for q in spider_questions(paths, 10**6)}
    shown = {name: shown_tables(path) for name, path in paths.items()}
    counts: Counter[tuple[str, str]] = Counter()
    turned: list[dict[str, Any]] = []
    for run, index, attempt in _attempts(files):
        question = questions.get(index)
        if question is None:
            continue
        trace = attempt.get("candidates") or {}
        first, written = int(trace.get("first", 0)), max(int(trace.get("written", 1)), 1)
        statements = [str(s["sql"]).split("\n-- for you:")[0] for s in attempt["sql"][first : first + written]]
        if not statements:
            continue
        path = paths[question.database]
        gold, error = run_readonly(path, question.reference)
        if error is not None:
            continue
        before = _chosen([_record(question.database, path, sql) for sql in statements])
        pruned = [without_unneeded_joins(sql, "sqlite", question.text, shown[question.database]) for sql in statements]
        after = _chosen([_record(question.database, path, sql) for sql in pruned])
        right = [r.error is None and same_result(r.rows, gold, r.truncated) for r in (before, after)]
        counts[(question.half, "answers")] += 1
        counts[(question.half, "right before")] += right[0]
        counts[(question.half, "right after")] += right[1]
        if right[0] != right[1]:
            counts[(question.half, "turned right" if right[1] else "turned wrong")] += 1
            turned.append(
                {"run": run, "id": index, "half": question.half, "right": right[1], "question": question.text}
                | {"before": before.sql, "after": after.sql}
            )
    halves = ("tune", "held-out")
    kinds = ("answers", "right before", "right after", "turned right", "turned wrong")
    summary = {half: {kind: counts[(half, kind)] for kind in kinds} for half in halves}
    return {"files": [p.name for p in files], "summary": summary, "turned": turned}


def _markdown(result: dict[str, Any]) -> str:
    rows = [[half, *figures.values()] for half, figures in result["summary"].items()]
    lines = [
        "# Unneeded joins left out, replayed on recorded Spider answers (no model)",
        "",
        f"{__doc__.split(chr(10) + chr(10))[1]}",
        "",
        *md_table(["half", "answers", "right before", "right after", "turned right", "turned wrong"], rows),
        "",
        "Answers turned:",
        "",
        *md_table(
            ["results", "#", "half", "now", "question"],
            [[t["run"], t["id"], t["half"], "✓" if t["right"] else "✗", t["question"]] for t in result["turned"]],
        ),
        "",
        f"Results replayed: {', '.join(result['files'])}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    current_run()
    parser = argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="*", type=Path)
    args = parser.parse_args()
    files = args.results or sorted(RESULTS.glob("local_model_accuracy_*.json"))
    result = replay(files)
    write_results("join_pruning_replay", result, _markdown(result))
    print(_markdown(result))


if __name__ == "__main__":
    main()
