"""A synthetic catalog for the search-latency and encoder benchmarks: schema-only table cards of an ERP-like naming
scheme (entity, kind and column abbreviations), written straight into the metadata store, and the embedders that
time or stand in for the model when such a catalog is indexed.
"""

from __future__ import annotations

import random
import re
import time
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import insert

from core.store.models import Source, SourceTable
from search.chunking import chunks_for

ENTITIES = (
    "ORD",
    "CUST",
    "PRD",
    "INV",
    "PAY",
    "SHIP",
    "EMP",
    "DEPT",
    "STK",
    "WH",
    "VND",
    "PO",
    "GL",
    "ACCT",
    "AR",
    "AP",
    "BUDGET",
    "ASSET",
    "LEASE",
    "CONTRACT",
    "CLAIM",
    "POLICY",
    "TICKET",
    "CAMPAIGN",
    "LEAD",
    "STORE",
)
KINDS = ("MST", "DTL", "HDR", "HIST", "LOG", "SUM", "MAP", "CFG", "TXN", "SNAP")
COLUMN_WORDS = (
    "ID",
    "NO",
    "CD",
    "NM",
    "DT",
    "AMT",
    "QTY",
    "PRC",
    "STAT",
    "TYPE",
    "RSN",
    "REG",
    "UPD",
    "USE_YN",
    "DESC",
    "ADDR",
    "TEL",
    "EMAIL",
    "CITY",
    "RGN",
    "GRD",
    "BAL",
    "TOT",
    "CNT",
    "RATE",
    "SEQ",
    "FLAG",
)
TYPES = ("VARCHAR(20)", "VARCHAR(100)", "INTEGER", "NUMERIC(14, 2)", "DATE", "DATETIME", "CHAR(1)")
ENCODER_SAMPLE_TABLES = 60
_WORD = re.compile(r"[a-z]+")


def synthetic_card(rng: random.Random, database: str, index: int) -> dict[str, Any]:
    entity = rng.choice(ENTITIES)
    name = f"{entity}_{rng.choice(KINDS)}_{index:05d}"
    width = rng.choice((12, 20, 35, 60, 140, 200))
    columns = [
        {
            "name": f"{entity}_ID",
            "type": "INTEGER",
            "family": "integer",
            "nullable": False,
            "key": "PK",
            "comment": None,
        }
    ]
    for position in range(1, width):
        word = f"{rng.choice(ENTITIES)}_{rng.choice(COLUMN_WORDS)}_{position}"
        columns.append(
            {"name": word, "type": rng.choice(TYPES), "family": "text", "nullable": True, "key": None, "comment": None}
        )
    return {
        "database": database,
        "schema": None,
        "table": name,
        "kind": "table",
        "role": "live",
        "copy_of": None,
        "purpose": name.replace("_", " ").lower(),
        "primary_key": [f"{entity}_ID"],
        "foreign_keys": [],
        "columns": columns,
        "watch": {},
        "joins": [],
        "row_count": None,
        "row_count_exact": False,
    }


class TimedEmbedder:
    """The embedding model, with the time each call took kept (so a search's embedding time is known)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = model.name
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> Any:
        started = time.perf_counter()
        try:
            return self.model.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started


class WordMeanEmbedder:
    """Chunk vectors for a simulation: the normalised mean of the model's vectors of the text's words, each distinct
    word embedded once by the model; a little noise from the text itself keeps two chunks of the same words apart."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = f"{model.name} (word means)"
        self.words: dict[str, int] = {}
        self.vectors = np.zeros((0, 384), dtype=np.float32)
        self.model_seconds = 0.0

    def _learn(self, words: set[str]) -> None:
        new = sorted(w for w in words if w not in self.words)
        if not new:
            return
        started = time.perf_counter()
        vectors = self.model.embed(new)
        self.model_seconds += time.perf_counter() - started
        for word in new:
            self.words[word] = len(self.words)
        self.vectors = np.vstack([self.vectors, vectors]) if len(self.vectors) else np.asarray(vectors)

    def embed(self, texts: Sequence[str]) -> Any:
        tokens = [_WORD.findall(t.lower()) or ["table"] for t in texts]
        self._learn({w for ts in tokens for w in ts})
        out = np.empty((len(texts), self.vectors.shape[1]), dtype=np.float32)
        for row, (words, source) in enumerate(zip(tokens, texts, strict=True)):
            mean = self.vectors[[self.words[w] for w in words]].mean(axis=0)
            noise = np.random.default_rng(zlib.crc32(source.encode())).standard_normal(mean.shape[0])
            vector = mean / (np.linalg.norm(mean) or 1.0) + 0.03 * noise / np.sqrt(mean.shape[0])
            out[row] = vector / np.linalg.norm(vector)
        return out


def add_catalog(store: Any, rng: random.Random, database: int, per_db: int, offset: int) -> int:
    with store.transaction() as session:
        source = Source(
            name=f"db{database:02d}", engine="synthetic", url_ref="synthetic", summary=f"synthetic database {database}"
        )
        session.add(source)
        session.flush()
        rows = []
        for i in range(per_db):
            card = synthetic_card(rng, source.name, offset + i)
            rows.append({"source_id": source.id, "name": card["table"], "card": card, "card_text": card["purpose"]})
        session.execute(insert(SourceTable), rows)
        return int(source.id)


def encoder_rate(model: Any, rng: random.Random) -> dict[str, float]:
    """Chunks and tables per second of the real model on the chunks of a sample of synthetic cards."""
    cards = [synthetic_card(rng, "sample", 900_000 + i) for i in range(ENCODER_SAMPLE_TABLES)]
    texts = [c.text for card in cards for c in chunks_for(card)]
    model.embed(texts[:8])
    started = time.perf_counter()
    model.embed(texts)
    seconds = time.perf_counter() - started
    return {
        "sample_tables": len(cards),
        "sample_chunks": len(texts),
        "chunks_per_second": round(len(texts) / seconds, 1),
        "tables_per_second": round(len(cards) / seconds, 2),
    }
