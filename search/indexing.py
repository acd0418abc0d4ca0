"""Keeping the search index in step with the cards: only chunks whose text changed are embedded again.

With a fast encoder (two-speed indexing, `search.refinement`) the new and changed chunks are written with its vector
in `fast_embedding` and none in `embedding`: searchable at once, by words and in the fast space; refinement makes
their vectors afterwards. The source's summary vector is always the main encoder's (one text)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from core.store.repositories import search_index, search_values
from core.store.repositories.chunk_copy import insert_chunks
from core.text.name_words import NameWords, catalog_words
from search.chunking import chunks_for, keyword_text
from search.encoders import Embedder, Vectors
from search.values import indexed_values

# In a large catalog a word found in more than 5% of all chunks (`id`, `name`, `code`) ranks nothing and makes
# every full-text query touch thousands of rows; small catalogs keep every word.
COMMON_WORD_SHARE = 0.05
COMMON_WORD_MIN_CHUNKS = 2000
#: New chunks copied per statement where no `ChunkWriter` takes them batch by batch (a chunk is about 3-5 KB).
INSERT_BATCH = 5000
#: Tables chunked and embedded at a time (about 3.5 chunks each): small enough that a `ChunkWriter` overlaps the
#: server's writing of one batch with the making of the next, large enough to keep the encoder's batches full.
TABLES_PER_BATCH = 250


@dataclass
class IndexReport:
    tables: int = 0
    embedded: int = 0
    reused: int = 0
    removed: int = 0
    multilingual: int = 0  # chunks given their multilingual vector (search.multilingual)
    fast: int = 0  # chunks written with the fast encoder's vector only, left to refinement (search.refinement)
    refined: int = 0  # chunks given their vector by refinement


@dataclass
class IndexPlan:
    """What indexing a source writes, worked out (chunks made and embedded) before anything is written."""

    source_id: int
    report: IndexReport
    new: list[dict[str, Any]] = field(default_factory=list)  # rows for `chunk_copy.insert_chunks`
    changed: list[tuple[int, int, str, int, str, str, list[float]]] = field(default_factory=list)
    stale: list[int] = field(default_factory=list)  # chunk ids whose table part is gone
    values: set[search_values.IndexedValue] = field(default_factory=set)
    summary_vector: list[float] | None = None
    fast: bool = False  # the chunk vectors are the fast encoder's

    @property
    def vectors_written(self) -> int:
        """Chunk vectors the write adds to the vector index: new chunks and changed ones, none after a fast pass
        (the index holds no fast vector; refinement adds theirs)."""
        return 0 if self.fast else self.report.embedded


def plan_index(
    session: Session,
    source_id: int,
    summary: str | None,
    embedder: Embedder,
    fast: Embedder | None = None,
    sink: Callable[[list[dict[str, Any]]], None] | None = None,
) -> IndexPlan:
    """Read the source's cards and chunks, make the chunks of each card and embed those whose text changed: by
    `fast` when given (their vectors are left to refinement), else by `embedder`. With `sink`, tables are taken
    `TABLES_PER_BATCH` at a time and each batch's new chunks are handed to it once made instead of kept in
    `IndexPlan.new` (a `ChunkWriter` writes them while the next batch is made); the session is read before the first
    batch only."""
    report = IndexReport()
    tables = search_index.indexable_tables(session, source_id)
    report.tables = len(tables)
    existing = search_index.existing_chunks(session, [t for t, _ in tables])
    plan = IndexPlan(source_id, report, values=indexed_values(tables), fast=fast is not None)
    names = NameWords(catalog_words(_catalog_texts(card for _, card in tables)))
    keep: set[int] = set()
    step = TABLES_PER_BATCH if sink is not None else max(len(tables), 1)  # the main encoder's batches as before
    for start in range(0, len(tables), step):
        new = _plan_batch(plan, tables[start : start + step], existing, keep, names, fast or embedder)
        if sink is None:
            plan.new.extend(new)
        else:
            sink(new)
    report.fast = report.embedded if plan.fast else 0
    plan.stale = [chunk_id for chunk_id, _ in existing.values() if chunk_id not in keep]
    plan.summary_vector = embedder.embed([summary])[0].tolist() if summary else None
    return plan


def _plan_batch(
    plan: IndexPlan,
    tables: list[tuple[int, dict[str, Any]]],
    existing: dict[tuple[int, str, int], tuple[int, str]],
    keep: set[int],
    names: NameWords,
    encoder: Embedder,
) -> list[dict[str, Any]]:
    """Chunk and embed some of the source's tables: the rows of their new chunks; changed chunks go to the plan."""
    wanted: list[tuple[int, int | None, str, int, str, str]] = []
    for table_id, card in tables:
        for chunk in chunks_for(card, names):
            current = existing.get((table_id, chunk.kind, chunk.ordinal))
            if current is not None and current[1] == chunk.text:
                keep.add(current[0])
                plan.report.reused += 1
                continue
            wanted.append(
                (table_id, current[0] if current else None, chunk.kind, chunk.ordinal, chunk.text, chunk.keywords)
            )
            if current is not None:
                keep.add(current[0])
    new: list[dict[str, Any]] = []
    vectors: Vectors | list[Any] = encoder.embed([w[4] for w in wanted]) if wanted else []
    for (table_id, chunk_id, kind, ordinal, text, keywords), vector in zip(wanted, vectors, strict=True):
        if chunk_id is None:
            new.append(
                {
                    "table_id": table_id,
                    "source_id": plan.source_id,
                    "kind": kind,
                    "ordinal": ordinal,
                    "text": text,
                    "keywords": keywords,
                    # a row of the float32 array, not a list: 384 Python floats per chunk took 12 KB each
                    "embedding": None if plan.fast else vector,
                    "fast_embedding": vector if plan.fast else None,
                }
            )
        else:
            plan.changed.append((chunk_id, table_id, kind, ordinal, text, keywords, vector.tolist()))
    plan.report.embedded += len(wanted)
    return new


def apply_index(session: Session, plan: IndexPlan) -> IndexReport:
    """Write a plan: chunks, the source's values and summary vector, its chunk count and the common words."""
    source_id = plan.source_id
    for chunk_id, table_id, kind, ordinal, text, keywords, vector in plan.changed:
        strong, fast = (None, vector) if plan.fast else (vector, None)
        search_index.upsert_chunk(session, chunk_id, source_id, table_id, kind, ordinal, text, keywords, strong, fast)
    for start in range(0, len(plan.new), INSERT_BATCH):
        insert_chunks(session, plan.new[start : start + INSERT_BATCH])
    search_index.delete_chunks(session, plan.stale)
    plan.report.removed = len(plan.stale) + search_index.delete_chunks_of_invisible(session, source_id)
    search_values.sync_values(session, source_id, plan.values)
    search_index.set_summary_embedding(session, source_id, plan.summary_vector)
    session.flush()
    search_index.set_chunk_count(session, source_id)
    search_index.refresh_common_words(session, COMMON_WORD_SHARE, COMMON_WORD_MIN_CHUNKS)
    return plan.report


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
