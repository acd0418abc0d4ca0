"""The plain BM25 baseline every retrieval figure is shown beside: Okapi BM25 (bm25s, k1 1.5, b 0.75) over each
table's name and column names, split on separators and case changes, English stop words removed. It reads the
benchmark's SQLite files directly, so nothing of tablescout's analysis (segmentation, descriptions, joins) helps it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z0-9]+")


def words(text: str) -> str:
    """Identifiers as words: `ORD_MST` → `ord mst`, `orderDate` → `order date`."""
    return " ".join(w.lower() for piece in _WORD.findall(text) for w in _CAMEL.sub(" ", piece).split())


def table_documents(path: Path) -> dict[str, str]:
    """Table name (lower case) → its name and column names as words."""
    documents = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        tables = [
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")
        ]
        for table in tables:
            columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table.replace(chr(34), chr(34) * 2)}")')]
            documents[table.lower()] = " ".join(words(t) for t in (table, *columns))
    return documents


class Bm25Baseline:
    """One BM25 index per database and one over every table of the set (pooled)."""

    def __init__(self, paths: dict[str, Path]) -> None:
        self.keys: list[tuple[str, str]] = []
        texts: list[str] = []
        for db_id, path in paths.items():
            for table, text in table_documents(path).items():
                self.keys.append((db_id, table))
                texts.append(text)
        self.pooled = self._index(texts)
        self.per_database: dict[str, tuple[bm25s.BM25, list[int]]] = {}
        for db_id in paths:
            members = [i for i, (db, _) in enumerate(self.keys) if db == db_id]
            self.per_database[db_id] = (self._index([texts[i] for i in members]), members)

    @staticmethod
    def _index(texts: Sequence[str]) -> bm25s.BM25:
        retriever = bm25s.BM25(k1=1.5, b=0.75)
        retriever.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False), show_progress=False)
        return retriever

    def ranking(self, question: str, db_id: str, pooled: bool, k: int = 25) -> list[tuple[str, str]]:
        retriever, members = (self.pooled, list(range(len(self.keys)))) if pooled else self.per_database[db_id]
        tokens = bm25s.tokenize([words(question)], stopwords="en", return_ids=False, show_progress=False)[0]
        known = [t for t in tokens if t in retriever.vocab_dict]
        scores = np.asarray(retriever.get_scores(known)) if known else np.zeros(len(members))
        order = np.argsort(-scores, kind="stable")[:k]  # every table, as a BM25 library ranks (ties in index order)
        return [self.keys[members[i]] for i in order]
