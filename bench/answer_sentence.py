"""Answer-sentence benchmark: the first line of an answer written from its rows (`workers.turns.sentences`), on
the sample ERP's questions, and what it costs.

Each question's reference SQL runs on the sample ERP (SQLite); its result becomes the answer's result table, with
each column's kind derived from the SQL as the turn engine derives it (cards are those a fresh analysis of the
sample would write, approximated here by the column types SQLite reports), and the sentence is written from it.
The results file lists every question with its sentence, for a reviewer to read, and the time per sentence
(p50/p95 over repeated writes). No model is called: the sentence is built from the question's words and the rows.

Run:  python -m bench.answer_sentence   (writes bench/results/answer_sentence.json and .md)
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import current_run, md_table, p50_p95, write_results
from bench.local_model_questions import QUESTIONS
from catalog.sample_erp import build_sqlite
from core.answer.model import ResultTable, json_cell
from workers.sql.result_kinds import result_kinds
from workers.turns.sentences import answer_sentence

REPEATS = 200


def _cards(connection: sqlite3.Connection) -> dict[str, dict[str, dict[str, Any]]]:
    """Card columns as analysis writes their kind-deciding fields: family from the declared type, keys."""
    cards: dict[str, dict[str, dict[str, Any]]] = {}
    tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        columns: dict[str, dict[str, Any]] = {}
        for _, name, declared, _, _, pk in connection.execute(f'PRAGMA table_info("{table}")'):
            kind = str(declared).upper()
            family = (
                "integer"
                if "INT" in kind
                else "decimal"
                if ("DEC" in kind or "NUM" in kind)
                else "float"
                if ("REAL" in kind or "FLOA" in kind or "DOUB" in kind)
                else "date"
                if "DATE" in kind
                else "text"
            )
            columns[name.upper()] = {"name": name, "family": family, "type": declared, "key": "PK" if pk else None}
        cards[table.upper()] = columns
    return cards


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS, help="writes of each sentence timed")
    args = parser.parse_args(argv)
    current_run()
    with tempfile.TemporaryDirectory(prefix="ts-bench-sentence-") as scratch:
        paths = build_sqlite(Path(scratch))
        connections = {name: sqlite3.connect(path) for name, path in paths.items()}
        cards = {name: _cards(c) for name, c in connections.items()}
        rows_out: list[dict[str, Any]] = []
        times_ms: list[float] = []
        for question in QUESTIONS:
            connection = connections[question.database]
            cursor = connection.execute(question.reference)
            columns = [d[0] for d in cursor.description]
            rows = [[json_cell(v) for v in row] for row in cursor.fetchmany(100)]
            kinds = result_kinds(question.reference, "sqlite", columns, cards[question.database])
            table = ResultTable(
                database=question.database, sql=question.reference, columns=columns, kinds=kinds, rows=rows
            )
            sentence = answer_sentence(question.text, table)
            started = time.perf_counter()
            for _ in range(args.repeats):
                answer_sentence(question.text, table)
            times_ms.append((time.perf_counter() - started) * 1000 / args.repeats)
            rows_out.append({"id": question.id, "question": question.text, "sentence": sentence})
        for connection in connections.values():
            connection.close()
    timing = p50_p95(times_ms, digits=3)
    lines = [
        "# Answer sentences",
        "",
        "The first line of an answer written from its rows, for each sample ERP question run with its reference SQL "
        "(`workers.turns.sentences`; no model call).",
        "",
        f"Time per sentence: p50 {timing['p50']} ms, p95 {timing['p95']} ms (target: at most 2 s).",
        "",
        *md_table(["#", "question", "sentence"], [(r["id"], r["question"], r["sentence"]) for r in rows_out]),
    ]
    write_results("answer_sentence", {"timing_ms": timing, "sentences": rows_out}, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
