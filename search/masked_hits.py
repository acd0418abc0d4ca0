"""Search hits as a reader may have them: what the reader may not know of a table (a value of a column masked for
them, the name of a column hidden from them, values and codes read from rows a row filter keeps from them, code
meanings from a table they may not read in full, the name of a table they may not see) never makes a table match,
nor ranks it higher.

The stored chunks are built from the whole card, for everyone. For a table whose card the reader sees otherwise
(`card_view.card_for_principal`, without their own counts), its keyword and semantic scores are computed again
from the chunks of that card (cut by `search.chunking.chunks_for`): a table that matched only through what the
reader may not know drops out of that ranking. Readers who see every table of a database in full (operators, most
users) cost nothing; the vectors of a reader's chunks are kept for the process, since the same reader's card gives
the same text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.cards.card_policies import column_masks, meanings_readable, rows_differ, split_qualified
from core.cards.card_view import card_for_principal, codes_visible, policies_of
from core.store.models import SourceTable
from core.store.repositories import bm25 as bm25_ranking
from core.store.repositories import search_queries as queries
from search.chunking import Chunk, chunks_for
from search.encoders import Embedder

#: Vectors of readers' chunk texts kept per process.
VECTORS_KEPT = 20_000


class _Vectors:
    """(embedder, chunk text) → its vector, for texts written for one reader (the most recently used
    `VECTORS_KEPT`); keyed by the embedder too, as one process searches in more than one vector space."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def of(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        keys = [(embedder.name, t) for t in texts]
        with self._lock:
            missing = [k for k in dict.fromkeys(keys) if k not in self._kept]
        if missing:
            made = np.asarray(embedder.embed([t for _, t in missing]))
            with self._lock:
                for key, vector in zip(missing, made, strict=True):
                    self._kept[key] = vector
                while len(self._kept) > VECTORS_KEPT:
                    self._kept.popitem(last=False)
        with self._lock:
            for key in keys:
                self._kept.move_to_end(key)
            return np.stack([self._kept[k] for k in keys])


_vectors = _Vectors()


def reads_otherwise(principal: Principal, database: str, card: dict[str, Any]) -> bool:
    """Would `principal`'s card of this table give other chunk text than the stored card (values, codes or names
    they may not know)? Cheap: no card is copied."""

    def may_see(schema: str | None, table: str) -> bool:
        return principal.may_see(database, table, schema)

    columns = [c for c in card.get("columns") or [] if isinstance(c, dict)]
    if any(c.get("codes") and not codes_visible(c, may_see) for c in columns):
        return True
    if any(not may_see(*split_qualified(fk.get("references"))) for fk in card.get("foreign_keys") or []):
        return True
    policies = policies_of(principal, database)
    if policies is None:
        return False
    if rows_differ(card, policies) or column_masks(card, policies):
        return True
    return any(c.get("codes") and not meanings_readable(c, policies) for c in columns)


class MaskedHits:
    """Rescores hits on tables the reader sees otherwise than stored; the others pass through untouched."""

    def __init__(self, session: Session, principal: Principal, names: Mapping[int, str], embedder: Embedder) -> None:
        self.session = session
        self.principal = principal
        self.names = names  # source id → source name, of the databases searched
        self.embedder = embedder
        self.active = not principal.operator and not all(principal.sees_all_of(name) for name in names.values())
        self._chunks: dict[int, list[Chunk] | None] = {}

    def _load(self, table_ids: Sequence[int]) -> None:
        missing = [t for t in dict.fromkeys(table_ids) if t not in self._chunks]
        for table_id, row in queries.tables(self.session, missing).items():
            self._chunks[table_id] = self._viewer_chunks(row)
        for table_id in missing:
            self._chunks.setdefault(table_id, None)

    def _viewer_chunks(self, row: SourceTable) -> list[Chunk] | None:
        database = self.names.get(row.source_id)
        if database is None or not row.card or self.principal.sees_all_of(database):
            return None
        if not reads_otherwise(self.principal, database, row.card):
            return None
        return chunks_for(card_for_principal(self.principal, database, dict(row.card)))

    def sees_otherwise(self, table_ids: Sequence[int]) -> set[int]:
        """The tables whose card the reader sees otherwise than stored (none for a reader who sees all)."""
        if not self.active:
            return set()
        self._load(table_ids)
        return {t for t in table_ids if self._chunks.get(t) is not None}

    def keyword(self, hits: list[queries.Hit], query: str, bm25: bool = False) -> list[queries.Hit]:
        """Keyword hits with such tables ranked on their best chunk as the reader sees it (and dropped when none
        matches): by BM25 with `bm25` (as `queries.keyword_hits_of` ranks), else by `ts_rank_cd`."""
        if not self.active:
            return hits
        self._load([h.table_id for h in hits])
        texts: list[str] = []
        spans: dict[int, tuple[int, int]] = {}
        for hit in hits:
            chunks = self._chunks.get(hit.table_id)
            if chunks is not None and hit.table_id not in spans:
                spans[hit.table_id] = (len(texts), len(texts) + len(chunks))
                texts.extend(c.keywords for c in chunks)
        if not texts:
            ranks: list[float | None] = []
        elif bm25:
            ranks = bm25_ranking.given_scores(self.session, texts, query, list(self.names))
        else:
            ranks = queries.text_ranks(self.session, texts, query)
        kept = []
        for hit in hits:
            if hit.table_id not in spans:
                kept.append(hit)
                continue
            start, end = spans[hit.table_id]
            found = [r for r in ranks[start:end] if r is not None]
            if found:
                kept.append(queries.Hit(hit.table_id, max(found), hit.source_id))
        return sorted(kept, key=lambda h: (-h.score, h.table_id))

    def semantic(
        self, hits: list[queries.Hit], vector: np.ndarray, embedder: Embedder | None = None
    ) -> list[queries.Hit]:
        """Semantic hits with such tables scored by their nearest chunk as the reader sees it (in the space of
        `embedder`, by default the search's)."""
        if not self.active:
            return hits
        self._load([h.table_id for h in hits])
        texts = [c.text for h in hits for c in self._chunks.get(h.table_id) or []]
        space = embedder or self.embedder
        vectors_of = dict(zip(texts, _vectors.of(space, texts), strict=True)) if texts else {}
        scored = []
        for hit in hits:
            chunks = self._chunks.get(hit.table_id)
            if not chunks:
                scored.append(hit)
                continue
            vectors = np.stack([vectors_of[c.text] for c in chunks])
            norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(vector) or 1.0)
            similarity = float(np.max((vectors @ vector) / np.where(norms == 0, 1.0, norms)))
            scored.append(queries.Hit(hit.table_id, similarity, hit.source_id))
        return sorted(scored, key=lambda h: (-h.score, h.table_id))
