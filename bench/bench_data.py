"""Benchmark data sets: Spider dev SQLite files, BIRD dev schemas built as empty SQLite databases, FIBEN's and
BEAVER-NW's schema-only SQLite files."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "bench"
SPIDER = SHARED / "spider" / "database"
BIRD_TABLES = SHARED / "bird" / "dev_tables.json"
GOLD = SHARED / "gold_tables.jsonl"
BIRD_TYPES = {
    "text": "TEXT",
    "integer": "INTEGER",
    "real": "REAL",
    "number": "NUMERIC",
    "date": "DATE",
    "datetime": "DATETIME",
    "time": "TIME",
    "blob": "BLOB",
    "boolean": "BOOLEAN",
}


@dataclass(frozen=True)
class Question:
    benchmark: str
    idx: int
    db_id: str
    question: str
    gold: tuple[str, ...]
    evidence: str = ""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def build_bird(directory: Path) -> dict[str, Path]:
    """Empty SQLite databases with BIRD's tables, columns, types, primary and foreign keys."""
    directory.mkdir(parents=True, exist_ok=True)
    built = {}
    for schema in json.loads(BIRD_TABLES.read_text()):
        path = directory / f"{schema['db_id']}.sqlite"
        path.unlink(missing_ok=True)
        tables = schema["table_names_original"]
        columns = schema["column_names_original"]
        types = schema["column_types"]
        pks: dict[int, list[str]] = {}
        for pk in schema["primary_keys"]:
            ids = pk if isinstance(pk, list) else [pk]
            for column_id in ids:
                pks.setdefault(columns[column_id][0], []).append(columns[column_id][1])
        fks: dict[int, list[tuple[str, str, str]]] = {}
        for source, target in schema["foreign_keys"]:
            src_table, src_col = columns[source]
            dst_table, dst_col = columns[target]
            fks.setdefault(src_table, []).append((src_col, tables[dst_table], dst_col))
        with sqlite3.connect(path) as conn:
            for index, table in enumerate(tables):
                defs = [
                    f"{_quote(name)} {BIRD_TYPES.get(types[i], 'TEXT')}"
                    for i, (owner, name) in enumerate(columns)
                    if owner == index
                ]
                if pks.get(index):
                    defs.append(f"PRIMARY KEY ({', '.join(_quote(c) for c in pks[index])})")
                for col, ref_table, ref_col in fks.get(index, []):
                    defs.append(f"FOREIGN KEY ({_quote(col)}) REFERENCES {_quote(ref_table)} ({_quote(ref_col)})")
                conn.execute(f"CREATE TABLE {_quote(table)} ({', '.join(defs)})")
        built[schema["db_id"]] = path
    return built


def copy_spider(directory: Path) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    copied = {}
    for db in sorted(p for p in SPIDER.iterdir() if (p / f"{p.name}.sqlite").exists()):
        target = directory / f"{db.name}.sqlite"
        shutil.copy(db / f"{db.name}.sqlite", target)
        copied[db.name] = target
    return copied


def questions(benchmark: str, databases: set[str]) -> list[Question]:
    evidence: dict[int, str] = {}
    if benchmark == "BIRD dev":
        for idx, item in enumerate(json.loads((SHARED / "bird" / "dev.json").read_text())):
            evidence[idx] = item.get("evidence") or ""
    found = []
    for line in GOLD.read_text().splitlines():
        item = json.loads(line)
        if item["benchmark"] != benchmark or item["db_id"] not in databases or not item["gold_tables"]:
            continue
        found.append(
            Question(
                benchmark,
                item["idx"],
                item["db_id"],
                item["question"],
                tuple(item["gold_tables"]),
                evidence.get(item["idx"], ""),
            )
        )
    return found


def inject_copies(path: Path) -> dict[str, str]:
    """A `_BAK` and a `_202312` copy of every table, with the same columns and a subset of the rows."""
    made = {}
    with sqlite3.connect(path) as conn:
        tables = [
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")
        ]
        for table in tables:
            for suffix, keep in (("_BAK", "rowid % 3 != 0"), ("_202312", "rowid % 2 = 0")):
                copy = f"{table}{suffix}"
                conn.execute(f"CREATE TABLE {_quote(copy)} AS SELECT * FROM {_quote(table)} WHERE {keep}")
                made[copy] = table
    return made


FIBEN = SHARED / "fiben"


def copy_fiben(directory: Path) -> dict[str, Path]:
    """FIBEN's one database (schema only), copied so the copy trap may add tables to it."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "fiben.sqlite"
    shutil.copy(FIBEN / "fiben.sqlite", target)
    target.chmod(0o644)
    return {"fiben": target}


def fiben_questions() -> list[Question]:
    found = []
    for line in (FIBEN / "questions.jsonl").read_text().splitlines():
        item = json.loads(line)
        if item["gold_tables"]:
            idx = int(str(item["id"]).rsplit(":", 1)[-1])
            found.append(Question("FIBEN", idx, item["db_id"], item["question"], tuple(item["gold_tables"])))
    return found


BEAVER_NW = SHARED / "beaver-nw"


def copy_beaver(directory: Path) -> dict[str, Path]:
    """BEAVER-NW's five OpenStack databases (schema only), copied so the copy trap may add tables to them."""
    directory.mkdir(parents=True, exist_ok=True)
    copied = {}
    for path in sorted(BEAVER_NW.glob("*.sqlite")):
        target = directory / path.name
        shutil.copy(path, target)
        target.chmod(0o644)
        copied[path.stem] = target
    return copied


def beaver_questions(databases: set[str]) -> list[Question]:
    found = []
    for line in (BEAVER_NW / "questions.jsonl").read_text().splitlines():
        item = json.loads(line)
        if item["gold_tables"] and item["db"] in databases:
            idx = int(str(item["id"]).rsplit(":", 1)[-1])
            found.append(Question("BEAVER-NW", idx, item["db"], item["question"], tuple(item["gold_tables"])))
    return found
