"""Keeping the search index in step with the cards: only chunks whose text changed are embedded again."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from core.name_words import NameWords, catalog_words
from core.store.repositories import search_index, search_values
from search.chunking import chunks_for, keyword_text
from search.encoders import Embedder
from search.values import indexed_values

# In a large catalog a word found in more than 5% of all chunks (`id`, `name`, `code`) ranks nothing and makes
# every full-text query touch thousands of rows; small catalogs keep every word.
COMMON_WORD_SHARE = 0.05
COMMON_WORD_MIN_CHUNKS = 2000
#: New chunks sent per INSERT statement list (each chunk carries a 384-number vector, about 4 KB as text).
INSERT_BATCH = 500


@dataclass
class IndexReport:
    tables: int = 0
    embedded: int = 0
    reused: int = 0
    removed: int = 0


def index_source(session: Session, source_id: int, summary: str | None, embedder: Embedder) -> IndexReport:
    report = IndexReport()
    tables = search_index.indexable_tables(session, source_id)
    report.tables = len(tables)
    existing = search_index.existing_chunks(session, [t for t, _ in tables])
    wanted: list[tuple[int, int | None, str, int, str, str]] = []
    keep: set[int] = set()
    names = NameWords(catalog_words(_catalog_texts(card for _, card in tables)))
    for table_id, card in tables:
        for chunk in chunks_for(card, names):
            current = existing.get((table_id, chunk.kind, chunk.ordinal))
            if current is not None and current[1] == chunk.text:
                keep.add(current[0])
                report.reused += 1
                continue
            wanted.append(
                (table_id, current[0] if current else None, chunk.kind, chunk.ordinal, chunk.text, chunk.keywords)
            )
            if current is not None:
                keep.add(current[0])
    vectors = embedder.embed([w[4] for w in wanted])
    new: list[dict[str, Any]] = []
    for (table_id, chunk_id, kind, ordinal, text, keywords), vector in zip(wanted, vectors, strict=True):
        if chunk_id is None:
            new.append(
                {
                    "table_id": table_id,
                    "source_id": source_id,
                    "kind": kind,
                    "ordinal": ordinal,
                    "text": text,
                    "keywords": keywords,
                    "embedding": vector.tolist(),
                }
            )
        else:
            search_index.upsert_chunk(
                session, chunk_id, source_id, table_id, kind, ordinal, text, keywords, vector.tolist()
            )
    for start in range(0, len(new), INSERT_BATCH):
        search_index.insert_chunks(session, new[start : start + INSERT_BATCH])
    report.embedded = len(wanted)
    stale = [chunk_id for chunk_id, _ in existing.values() if chunk_id not in keep]
    search_index.delete_chunks(session, stale)
    report.removed = len(stale) + search_index.delete_chunks_of_invisible(session, source_id)
    search_values.sync_values(session, source_id, indexed_values(tables))
    summary_vector = embedder.embed([summary])[0].tolist() if summary else None
    search_index.set_summary_embedding(session, source_id, summary_vector)
    session.flush()
    search_index.set_chunk_count(session, source_id)
    search_index.refresh_common_words(session, COMMON_WORD_SHARE, COMMON_WORD_MIN_CHUNKS)
    return report


def _catalog_texts(cards: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The names and comments of a source's cards: the words its catalog writes apart."""
    for card in cards:
        yield str(card.get("table") or "")
        if card.get("comment"):
            yield str(card["comment"])
        for column in card.get("columns", []):
            yield str(column.get("name") or "")
            if column.get("comment"):
                yield str(column["comment"])


def index_note(session: Session, note_id: int, text: str, embedder: Embedder) -> None:
    search_index.set_note_index(session, note_id, keyword_text(text), embedder.embed([text])[0].tolist())
