"""Copy-detection benchmark: precision and recall of `copy_of`, and the analysis rate.

Data: the Spider dev SQLite databases in ../shared/bench (each copied to a scratch folder) with injected copies
of their tables (`_BAK`, `_YYYYMM`, `BAK_` prefix, `_OLD`, `_TMP`; same columns, a subset of the rows), plus
the sample ERP database. Rate: schema-only and profiled analysis of those databases, and schema-only analysis of a
synthetic database of 1,000 tables.

Run:  python -m bench.copy_detection   (writes bench/results/copy_detection.json and .md)
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_data import SPIDER
from bench.harness import Timer, current_run, md_table, program, write_results
from catalog.analysis import AnalysisOptions, analyze_source
from catalog.registration import add_source
from catalog.sample_erp import build_sqlite
from core.config.settings import Settings
from core.store import migrate
from core.store.database import Store, open_store
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo

PATTERNS = ("{}_BAK", "{}_202312", "BAK_{}", "{}_OLD", "{}_TMP")
SEED = 7


def inject_copies(path: Path, rng: random.Random) -> dict[str, str]:
    """Add one copy of every table (a subset of its rows); returns copy name → live table."""
    expected: dict[str, str] = {}
    with sqlite3.connect(path) as conn:
        query = "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        tables = [r[0] for r in conn.execute(query)]
        names = {t.lower() for t in tables}
        for index, table in enumerate(sorted(tables)):
            copy = PATTERNS[(index + rng.randrange(len(PATTERNS))) % len(PATTERNS)].format(table)
            if copy.lower() in names:
                continue
            keep = rng.choice((2, 3, 4, 10))
            conn.execute(f'CREATE TABLE "{copy}" AS SELECT * FROM "{table}" WHERE rowid % {keep} != 0')
            expected[copy] = table
            names.add(copy.lower())
    return expected


def synthetic_wide_database(path: Path, tables: int) -> None:
    with sqlite3.connect(path) as conn:
        for i in range(tables):
            parent = f", PARENT_ID INTEGER REFERENCES T{i - 1:04d}(ID)" if i else ""
            cols = ", ".join(f"C{j:02d}_{'AMT' if j % 3 == 0 else 'NM'} TEXT" for j in range(12))
            conn.execute(f"CREATE TABLE T{i:04d} (ID INTEGER PRIMARY KEY, {cols}{parent})")


def installation(home: Path) -> tuple[Settings, Store]:
    settings = Settings(home=home)
    store = open_store(settings)
    migrate.upgrade(store.engine)
    return settings, store


def register(settings: Settings, store: Store, name: str, path: Path) -> Settings:
    add_source(settings, store, name, f"sqlite:///{path}", [])
    return Settings(home=settings.home)


def judged(store: Store, name: str) -> dict[str, str | None]:
    with store.transaction() as session:
        source = source_repo.by_name(session, name)
        assert source is not None
        rows = catalog_repo.tables_of(session, source.id)
        by_id = {t.id: t.name for t in rows}
        return {t.name: by_id.get(t.copy_of_id) if t.copy_of_id else None for t in rows}


def main() -> int:
    current_run()
    argparse.ArgumentParser(prog=program(), description=__doc__.split("\n\n")[0]).parse_args()
    rng = random.Random(SEED)
    work = Path(tempfile.mkdtemp(prefix="ts-bench-copy-"))
    settings, store = installation(work / "home")
    expected: dict[str, dict[str, str]] = {}
    paths: dict[str, Path] = {}
    for db in sorted(p for p in SPIDER.iterdir() if (p / f"{p.name}.sqlite").exists()):
        target = work / f"{db.name}.sqlite"
        shutil.copy(db / f"{db.name}.sqlite", target)
        expected[db.name] = inject_copies(target, rng)
        paths[db.name] = target
    sample = build_sqlite(work / "sample")
    paths["erp"] = sample["erp"]
    expected["erp"] = {"ORD_MST_BAK": "ORD_MST", "ORD_MST_202312": "ORD_MST", "CUST_MST_TMP": "CUST_MST"}
    for name, path in paths.items():
        settings = register(settings, store, name, path)

    timings: dict[str, dict[str, float]] = {
        "schema_only": {"tables": 0, "seconds": 0.0},
        "profiled": {"tables": 0, "seconds": 0.0},
    }
    true_positive = false_positive = false_negative = 0
    errors: list[dict[str, Any]] = []
    for name in paths:
        for kind, profile in (("schema_only", False), ("profiled", True)):
            with Timer() as analysis:
                report = analyze_source(settings, store, name, AnalysisOptions(profile=profile, full=True))
            timings[kind]["seconds"] += analysis.seconds
            timings[kind]["tables"] += report.tables
        got = judged(store, name)
        for table, live in got.items():
            want = expected[name].get(table)
            if live is not None and live == want:
                true_positive += 1
            elif live is not None:
                false_positive += 1
                errors.append({"database": name, "table": table, "judged_copy_of": live, "expected": want})
            elif want is not None:
                false_negative += 1
                errors.append({"database": name, "table": table, "judged_copy_of": None, "expected": want})

    wide = work / "wide.sqlite"
    synthetic_wide_database(wide, 1000)
    settings = register(settings, store, "wide", wide)
    with Timer() as wide_analysis:
        wide_report = analyze_source(settings, store, "wide", AnalysisOptions(profile=False, full=True))
    wide_seconds = wide_analysis.seconds
    store.close()
    shutil.rmtree(work, ignore_errors=True)

    precision = true_positive / max(1, true_positive + false_positive)
    recall = true_positive / max(1, true_positive + false_negative)
    result = {
        "databases": len(paths),
        "injected_copies": sum(len(v) for v in expected.values()),
        "true_positive": true_positive,
        "false_positive": false_positive,
        "false_negative": false_negative,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "errors": errors,
        "rate_tables_per_second": {
            k: round(v["tables"] / v["seconds"], 1) if v["seconds"] else None for k, v in timings.items()
        },
        "wide_1000_tables_schema_only_seconds": round(wide_seconds, 2),
        "wide_tables_analysed": wide_report.tables,
        "targets": {"precision": 0.99, "recall": 0.95, "wide_1000_tables_schema_only_seconds": 60},
    }
    rate: dict[str, Any] = result["rate_tables_per_second"]  # type: ignore[assignment]
    rows = [
        ("databases (Spider dev + sample ERP)", result["databases"], ""),
        ("injected copies", result["injected_copies"], ""),
        ("copy_of precision", f"{result['precision']:.4f}", "≥ 0.99"),
        ("copy_of recall", f"{result['recall']:.4f}", "≥ 0.95"),
        ("schema-only rate (tables/s)", rate["schema_only"], ""),
        ("profiled rate (tables/s)", rate["profiled"], ""),
        ("1,000 tables schema-only (s)", result["wide_1000_tables_schema_only_seconds"], "< 60"),
    ]
    markdown = "\n".join(md_table(("metric", "value", "target"), rows)) + "\n"
    write_results("copy_detection", result, markdown)
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
