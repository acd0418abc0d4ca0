"""The local-model benchmark's results: each system's summary per set and half, the markdown tables, and the
JSON with every attempt (bench/results/local_model_accuracy_<size>.json and .md, or the name given).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict
from typing import Any

import sqlglot
from sqlglot import exp

from bench.harness import md_table, write_results
from bench.local_model_questions import Attempt, Item

NAME = "local_model_accuracy"
SYSTEMS = ("guided", "examples", "loop", "schema", "allschema")
LABELS = {
    "guided": "guided path (one search → compact schema → one SQL, bounded repair)",
    "examples": "guided path with verified examples (Spider only: the gold SQL of the other hash half approved)",
    "loop": "tool loop (search → cards → SQL rounds)",
    "schema": "whole schema in one prompt, one SQL",
    "allschema": (
        "Spider only: the schemas of all registered databases in one prompt, the model chooses the database, one SQL "
        "(the server's prompt cache keeps the schemas after the first question)"
    ),
}


#: The rows of the error table: what a wrong answer got wrong first, in this order.
ERROR_KINDS = (
    "wrong database",
    "wrong table",
    "wrong join",
    "wrong column",
    "wrong aggregation or filter",
    "SQL error",
)


def _parts(sql: str) -> tuple[set[str], int, set[str]] | None:
    """(tables, joins, columns) a statement reads, names in upper case; None when it does not parse."""
    try:
        tree = sqlglot.parse_one(sql.split("\n-- for you:")[0], read="sqlite")
    except (sqlglot.errors.SqlglotError, ValueError):
        return None
    tables = {t.name.upper() for t in tree.find_all(exp.Table)}
    columns = {c.name.upper() for c in tree.find_all(exp.Column)}
    return tables, len(list(tree.find_all(exp.Join))), columns


def error_kind(item: Item, run: dict[str, Any] | None) -> str:
    """The error table's row of a wrong answer whose last statement that ran is `run` (None: none ran)."""
    if run is None:
        return "SQL error"
    if run.get("database") != item.database:
        return "wrong database"
    predicted, gold = _parts(str(run.get("sql") or "")), _parts(item.reference)
    if predicted is None or gold is None:
        return "SQL error" if predicted is None else "wrong aggregation or filter"
    if predicted[0] != gold[0]:
        return "wrong table"
    if predicted[1] != gold[1]:
        return "wrong join"
    if predicted[2] != gold[2]:
        return "wrong column"
    return "wrong aggregation or filter"


def _mean(values: list[float]) -> float:
    return round(statistics.mean(values), 1) if values else 0.0


def summary(attempts: list[Attempt]) -> dict[str, Any]:
    if not attempts:
        return {}
    seconds = [a.seconds for a in attempts]
    wrong = [a for a in attempts if not a.correct]
    return {
        "questions": len(attempts),
        "correct": sum(a.correct for a in attempts),
        "accuracy": round(sum(a.correct for a in attempts) / len(attempts), 3),
        "rounds_per_turn": round(statistics.mean(a.rounds for a in attempts), 2),
        "model_calls_per_turn": round(statistics.mean(a.model_calls for a in attempts), 2),
        "input_tokens_per_turn": round(statistics.mean(a.input_tokens for a in attempts)),
        "seconds_per_turn_mean": round(statistics.mean(seconds), 1),
        "seconds_per_turn_median": round(statistics.median(seconds), 1),
        "failing_steps": {s: sum(a.step == s for a in wrong) for s in sorted({a.step for a in wrong})},
        "joins_taken_out": sum(bool(a.pruned) for a in attempts),
        "joins_taken_out_correct": sum(bool(a.pruned) and a.correct for a in attempts),
        "statuses": {s: sum(a.status == s for a in attempts) for s in sorted({a.status for a in attempts})},
        "errors": {k: sum(a.error_kind == k for a in wrong) for k in ERROR_KINDS},
        "wrong_with_doubt": sum(a.status == "partial" for a in wrong),
        # the answer was a question back (which database?): no figure to trust, and not counted as a doubt
        "wrong_asked_back": sum(a.step == "ambiguity" for a in wrong),
        "right_with_doubt": sum(a.status == "partial" and a.correct for a in attempts),
        "output_tokens_per_turn": round(statistics.mean(a.output_tokens for a in attempts)),
        "prompt_tokens_per_call": round(statistics.mean([c[0] for a in attempts for c in a.calls] or [0])),
        "seconds_in": {
            part: round(_mean([a.ms.get(part, 0.0) for a in attempts]) / 1000, 2)
            for part in ("search", "model", "sql", "check")
        },
    }


def _groups(items: list[Item]) -> list[tuple[str, list[Item]]]:
    groups = []
    for name in ("erp", "spider"):
        of_set = [i for i in items if i.set == name]
        if not of_set:
            continue
        groups.append((name, of_set))
        if name == "spider":
            groups += [(f"spider {half}", [i for i in of_set if i.half == half]) for half in ("tune", "held-out")]
    return groups


def write_report(meta: dict[str, Any], items: list[Item], results: dict[str, dict[tuple[str, int], Attempt]]) -> None:
    """The summaries and every attempt so far, as JSON and as markdown (after every question: a partial run keeps its
    figures)."""
    name = meta.get("results") or f"{NAME}_{meta['size']}"
    tables: dict[str, dict[str, Any]] = {}
    for group, members in _groups(items):
        for system in SYSTEMS:
            done = [results[system][(i.set, i.id)] for i in members if (i.set, i.id) in results.get(system, {})]
            if done:
                tables.setdefault(group, {})[system] = summary(done) | {"of": len(members)}
    per_question = [
        {"set": i.set, "id": i.id, "half": i.half, "question": i.text, "database": i.database}
        | {s: asdict(results[s][(i.set, i.id)]) for s in SYSTEMS if (i.set, i.id) in results.get(s, {})}
        for i in items
    ]
    payload = meta | {"summaries": tables, "questions": per_question}
    write_results(name, payload, markdown(payload), default=str)


def markdown(payload: dict[str, Any]) -> str:
    meta, tables = payload, payload["summaries"]
    lines = [
        "# Local model: answer accuracy, guided path vs. tool loop vs. the whole schema in one prompt",
        "",
        f"Model {meta['model']} (Q4_K_M GGUF, llama.cpp via xllamacpp, {meta['threads']} CPU threads, "
        f"{meta['cpus']} cores; {meta.get('note') or 'a machine shared with other work'}), one local model server for "
        "every system. "
        f"Sample ERP: {meta['erp_questions']} questions on the erp and billing databases (both registered, nothing "
        f"pinned). Spider dev: {meta['spider_questions']} questions {_drawn(meta)}, all "
        f"{meta['spider_databases']} databases with files registered in one installation, nothing pinned; the "
        "hash also splits them into a tuning half and a held-out half. The whole-schema prompt gets both ERP "
        "databases, and for Spider the schema of the question's own database (it is told the database); allschema "
        "gets every Spider schema. Turn "
        f"deadline {meta['deadline_s']:.0f} s. Run {meta['started']}, {meta['elapsed_min']:.0f} min"
        + (" (partial: see the counts)." if meta.get("partial") else "."),
        "",
        "Correct: ERP, the expected values in the answer or the last SQL's cells; Spider, the last SQL that ran "
        "on the question's database returned the gold SQL's rows (multisets). Failing step of a wrong answer: "
        "selection (wrong database, or a gold table not among those the SQL could use), sql (the statement ran or "
        "failed on the right tables), repair (it failed or found nothing, and the repair did not fix it), ambiguity "
        "(the answer asked which database), no_sql.",
        "",
    ]
    rows = []
    for group, systems in tables.items():
        for system, f in systems.items():
            steps = ", ".join(f"{k} {v}" for k, v in f["failing_steps"].items()) or "-"
            figures = (f[k] for k in ("rounds_per_turn", "model_calls_per_turn", "input_tokens_per_turn"))
            seconds = f"{f['seconds_per_turn_mean']} / {f['seconds_per_turn_median']}"
            measured = f"{f['questions']}/{f['of']}"
            rows.append([group, system, measured, f["correct"], f"{f['accuracy']:.0%}", *figures, seconds, steps])
    header = ["set", "system", "measured", "correct", "accuracy", "rounds", "model calls", "prompt tokens"]
    lines += md_table([*header, "s per question (mean / median)", "failing steps"], rows)
    rows = []
    for group, systems in tables.items():
        for system, f in systems.items():
            parts = f.get("seconds_in") or {}
            wrong = f["questions"] - f["correct"]
            rows.append(
                [group, system, f.get("prompt_tokens_per_call", ""), f.get("output_tokens_per_turn", "")]
                + [parts.get(p, "") for p in ("search", "model", "sql", "check")]
                + [*(f.get("errors") or {}).values(), f"{f.get('wrong_with_doubt', 0)} of {wrong}"]
                + [f.get("wrong_asked_back", 0)]
            )
    lines += [
        "",
        "Where the time goes (mean per question; seconds of model calls include prompt processing) and "
        "the error table (what each wrong answer got wrong first, against the reference SQL):",
        "",
    ]
    header = ["set", "system", "prompt tokens per call", "generated tokens", "search s", "model s", "SQL s"]
    doubted = ["wrong with a stated doubt", "wrong: asked which database"]
    lines += md_table([*header, "check s", *ERROR_KINDS, *doubted], rows)
    taken = [
        f"{group} {system}: {f['joins_taken_out']} ({f['joins_taken_out_correct']} of them correct)"
        for group, systems in tables.items()
        for system, f in systems.items()
        if f.get("joins_taken_out")
    ]
    if taken:
        lines += ["", "Joins taken out of the model's statement before it ran (`workers.turns.join_pruning`): "]
        lines[-1] += "; ".join(taken) + "."
    lines += ["", "Systems: " + "; ".join(f"{k}: {v}" for k, v in LABELS.items()) + ".", ""]
    rows = []
    for row in payload["questions"]:
        cells = []
        for system in SYSTEMS:
            a: dict[str, Any] | None = row.get(system)
            if a is None:
                cells.append("")
                continue
            mark = "✓" if a["correct"] else f"✗ {a['step']}"
            cells.append(f"{mark} {a['seconds']}s" + (" (join out)" if a.get("pruned") else ""))
        rows.append([row["set"], row["id"], row["half"], row["question"], *cells])
    lines += md_table(["set", "#", "half", "question", *SYSTEMS], rows)
    return "\n".join(lines) + "\n"


def _drawn(meta: dict[str, Any]) -> str:
    """How the Spider questions were chosen: at random with the run's seed, or by the fixed hash."""
    seed = meta.get("spider_seed")
    return f"drawn at random with seed {seed}" if seed is not None else "chosen by a fixed hash of their index"
