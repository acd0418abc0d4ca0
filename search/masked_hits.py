"""Search hits as a reader with column masks may have them: a value of a column masked for the reader (its frequent
values and codes are indexed in the table's chunks), or the name of a column hidden from them, never makes a table
match, nor ranks it higher.

The stored chunks are built from the whole card, for everyone. For a table where some column is masked for the
reader, its keyword and semantic scores are computed again from the chunks of the card as the reader sees it
(`core.card_view.card_for_principal`, cut by `search.chunking.chunks_for`): a table that matched only through masked
values drops out of that ranking. Readers without data policies (most users, operators) cost nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sqlalchemy.orm import Session

from core.card_view import card_for_principal
from core.permissions import Principal
from core.store.models import SourceTable
from core.store.repositories import search_queries as queries
from search.chunking import Chunk, chunks_for
from search.encoders import Embedder


class MaskedHits:
    """Rescores hits on tables with columns masked for one reader; the others pass through untouched."""

    def __init__(self, session: Session, principal: Principal, names: Mapping[int, str], embedder: Embedder) -> None:
        self.session = session
        self.principal = principal
        self.names = names  # source id → source name, of the databases searched
        self.embedder = embedder
        self.active = any(principal.has_data_policies(name) for name in names.values())
        self._chunks: dict[int, list[Chunk] | None] = {}
        self._vectors: dict[int, np.ndarray] = {}

    def _load(self, table_ids: Sequence[int]) -> None:
        missing = [t for t in dict.fromkeys(table_ids) if t not in self._chunks]
        for table_id, row in queries.tables(self.session, missing).items():
            self._chunks[table_id] = self._viewer_chunks(row)
        for table_id in missing:
            self._chunks.setdefault(table_id, None)

    def _viewer_chunks(self, row: SourceTable) -> list[Chunk] | None:
        database = self.names.get(row.source_id)
        if database is None or not row.card:
            return None
        schema = row.schema_name or None
        if not self.principal.may_mask(database, row.name, schema):
            return None
        names = [str(c.get("name")) for c in row.card.get("columns") or []]
        if not self.principal.column_masks(database, row.name, names, schema):
            return None
        return chunks_for(card_for_principal(self.principal, database, dict(row.card)))

    def keyword(self, hits: list[queries.Hit], query: str) -> list[queries.Hit]:
        """Keyword hits with masked tables ranked on what the reader sees (and dropped when that does not match)."""
        if not self.active:
            return hits
        self._load([h.table_id for h in hits])
        kept = []
        for hit in hits:
            chunks = self._chunks.get(hit.table_id)
            if chunks is None:
                kept.append(hit)
                continue
            ranks = [r for r in queries.text_ranks(self.session, [c.keywords for c in chunks], query) if r is not None]
            if ranks:
                kept.append(queries.Hit(hit.table_id, max(ranks), hit.source_id))
        return sorted(kept, key=lambda h: (-h.score, h.table_id))

    def semantic(self, hits: list[queries.Hit], vector: np.ndarray) -> list[queries.Hit]:
        """Semantic hits with masked tables scored by their nearest chunk as the reader sees it."""
        if not self.active:
            return hits
        self._load([h.table_id for h in hits])
        scored = []
        for hit in hits:
            chunks = self._chunks.get(hit.table_id)
            if not chunks:
                scored.append(hit)
                continue
            if hit.table_id not in self._vectors:
                self._vectors[hit.table_id] = np.asarray(self.embedder.embed([c.text for c in chunks]))
            vectors = self._vectors[hit.table_id]
            norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(vector) or 1.0)
            similarity = float(np.max((vectors @ vector) / np.where(norms == 0, 1.0, norms)))
            scored.append(queries.Hit(hit.table_id, similarity, hit.source_id))
        return sorted(scored, key=lambda h: (-h.score, h.table_id))
