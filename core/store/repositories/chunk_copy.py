"""New search chunks copied into the store: in one call, or by a second thread while the caller makes the next ones.

COPY cannot compute the full-text vector, so new chunks go through a temporary table and an INSERT from it makes
the vector on the server. Making the full-text vectors of a large catalog's chunks is the server's biggest part of
indexing (about 4 s of the 22 s fast pass at 3,000 wide tables); `ChunkWriter` lets it run on the server's core
while Python cuts and embeds the next tables' chunks.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import psycopg
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo
from sqlalchemy import text
from sqlalchemy.orm import Session

_NEW_CHUNKS = (
    "CREATE TEMPORARY TABLE IF NOT EXISTS new_search_chunks (table_id integer, source_id integer, kind text, "
    "ordinal integer, text text, keywords text, embedding vector, fast_embedding vector) ON COMMIT DELETE ROWS"
)
_COPY_CHUNKS = (
    "COPY new_search_chunks (table_id, source_id, kind, ordinal, text, keywords, embedding, fast_embedding) "
    "FROM STDIN (FORMAT BINARY)"
)
#: The copied columns' types: binary COPY sends a vector as its 32-bit numbers (pgvector's binary form), about a
#: twentieth of the time of writing 384 numbers as text and parsing them again on the server.
_COLUMN_TYPES = ("int4", "int4", "text", "int4", "text", "text", "vector", "vector")
_FROM_NEW_CHUNKS = (
    "INSERT INTO search_chunks (table_id, source_id, kind, ordinal, text, embedding, fast_embedding, tsv) "
    "SELECT table_id, source_id, kind, ordinal, text, embedding, fast_embedding, to_tsvector('simple', keywords) "
    "FROM new_search_chunks"
)


def insert_chunks(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """New chunks (keys: table_id, source_id, kind, ordinal, text, keywords, embedding and fast_embedding, one of
    the two vectors None), copied in and inserted in one statement, in the session's transaction; the full-text
    vector is made from `keywords` by the server. An INSERT of many rows spent more time building its parameters
    than the server spent storing them."""
    if rows:
        _copy_in(_driver_connection(session), rows)


def _driver_connection(session: Session) -> psycopg.Connection[Any]:
    session.execute(text(_NEW_CHUNKS))
    raw = session.connection().connection.driver_connection
    if not isinstance(raw, psycopg.Connection):  # the store always speaks psycopg (core.store.database)
        raise TypeError(f"the metadata store's driver connection is {type(raw).__name__}, not psycopg's")
    return raw


def _copy_in(raw: psycopg.Connection[Any], rows: Sequence[dict[str, Any]]) -> None:
    vector = TypeInfo.fetch(raw, "vector")
    with raw.cursor() as cursor:
        # pgvector's dumpers and loaders for this cursor alone (its adapters are the connection's, copied on write):
        # on the connection they would hand SQLAlchemy's vector columns objects where it reads text.
        register_vector_info(cursor, vector)  # type: ignore[arg-type]  # annotated for connections, takes cursors
        with cursor.copy(_COPY_CHUNKS) as copy:
            copy.set_types(list(_COLUMN_TYPES))
            for row in rows:
                copy.write_row(
                    (
                        row["table_id"],
                        row["source_id"],
                        row["kind"],
                        row["ordinal"],
                        row["text"],
                        row["keywords"],
                        row["embedding"],
                        row["fast_embedding"],
                    )
                )
        cursor.execute(_FROM_NEW_CHUNKS)
        cursor.execute("DELETE FROM new_search_chunks")  # the next batch in the same transaction starts empty


class ChunkWriter:
    """Inserts batches of new chunks (rows as for `insert_chunks`) in the session's transaction from a second
    thread, in the order sent. Use as a context manager: between entering and leaving, the session's connection
    belongs to the writer and the caller must not use the session. Leaving waits for every batch sent; an error of
    the writer is raised there (or by the next `send`), and once one happened later batches are not written, so
    the transaction is left to roll back."""

    #: Batches waiting at most: the caller blocks instead of holding more of them in memory.
    WAITING = 2

    def __init__(self, session: Session) -> None:
        self._raw = _driver_connection(session)
        self._batches: queue.Queue[list[dict[str, Any]] | None] = queue.Queue(self.WAITING)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="chunk-writer", daemon=True)
        self.written = 0

    def __enter__(self) -> ChunkWriter:
        self._thread.start()
        return self

    def send(self, rows: Sequence[dict[str, Any]]) -> None:
        if self._error is not None:
            raise self._error
        if rows:
            self._batches.put(list(rows))

    def _run(self) -> None:
        while (rows := self._batches.get()) is not None:
            if self._error is not None:
                continue  # drained, not written: the transaction is lost already
            try:
                _copy_in(self._raw, rows)
                self.written += len(rows)
            except BaseException as exc:  # handed to the caller's thread, raised there
                self._error = exc

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if error is not None and self._error is None:
            self._error = error  # the caller failed: batches still waiting are dropped, the transaction rolls back
        self._batches.put(None)
        self._thread.join()
        if self._error is not None and error is None:
            raise self._error
