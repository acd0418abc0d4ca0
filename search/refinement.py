"""Two-speed indexing: chunks are searchable as soon as they are written, with the fast encoder's vector, and the
main encoder's vector follows (refinement).

The main encoder (the int8 MiniLM, `search.encoder_onnx`) embeds about 70 chunks a second on two cores and was the
limit of indexing. With `fast_indexing` on (the default), indexing (`search.indexing`) embeds new and changed chunks
with the static word pieces distilled from it (`search.encoder_static`, thousands a second) into `fast_embedding`
and leaves `embedding` NULL. Search finds such chunks by words as always and by meaning in the fast space: the
question's fast vector ranks them by an exact scan, one more ranking in the fusion (`search.service`).

Refinement then gives every chunk of a source whose `embedding` is NULL its vector, `BATCH` chunks at a time: each
batch is read, embedded and written (one UPDATE) under the source's indexing lock and in transactions of its own, so
an analysis of the source waits one batch at most, an interrupted refinement keeps what it wrote, and the next one
goes on from there. Writing the vector clears `fast_embedding`: the fast vector is read only while `embedding` is
NULL, and a refined chunk keeps no 1.5 KB it never uses in its row, which every exact scan reads; a fully refined
store then holds what indexing without the fast pass writes and is searched the same way. (The int8 encoder's vector
of a text varies a little with the batch it is embedded in, cosine 0.99 or more, so near-ties may fall otherwise.)

A worker's analysis queues refinement as a job per source (`tablescout.search.refine_source`); `tablescout analyze`
refines every source it analysed before it ends. One refinement of a source runs at a time: another finds the
source's refinement lock held and leaves the work to the one that holds it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from core.store.database import Store
from core.store.repositories import search_index, vector_index
from search.encoders import Embedder
from search.multilingual import LazyEmbedder

if TYPE_CHECKING:
    from core.config.settings import Settings

#: Chunks embedded and written per batch (one UPDATE statement each): about 3.5 s of the int8 encoder on two cores.
BATCH = 256

_shared: dict[tuple[str, str | None], LazyEmbedder] = {}
_shared_lock = threading.Lock()


def static_embedder_for(settings: Settings) -> Embedder:
    """The process's static word-piece embedder (made on first use, under TABLESCOUT_HOME/encoders): the fast space
    a search compares with chunks not yet refined, whatever `fast_indexing` says now."""
    model_dir = settings.embedding_model if settings.embedding_encoder != "use-multilingual" else None
    home = settings.home
    key = (str(home), model_dir)
    with _shared_lock:
        found = _shared.get(key)
        if found is None:

            def make() -> Embedder:
                from search.encoder_static import StaticEmbedder

                return StaticEmbedder.prepared(home, model_dir)

            found = LazyEmbedder("all-MiniLM-L6-v2 static word pieces", make)
            _shared[key] = found
        return found


def fast_embedder_for(settings: Settings) -> Embedder | None:
    """The embedder of indexing's fast pass, or None with `fast_indexing` off (chunks get the main vector at once)."""
    return static_embedder_for(settings) if settings.fast_indexing else None


def refine_source(
    store: Store, source_id: int, embedder: Embedder, batch: int = BATCH, batches: int | None = None
) -> int:
    """Give every chunk of the source without its vector one from `embedder`, `batch` at a time (at most `batches`
    batches when given); how many were given. 0 at once when another refinement of the source is running."""
    made = 0
    done = 0
    with vector_index.source_refining(store.engine, source_id) as ours:
        if not ours:
            return 0
        after = 0
        while batches is None or done < batches:
            with vector_index.source_indexing(store.engine, source_id):
                with store.transaction() as session:
                    pending = search_index.unrefined_chunks(session, source_id, after, batch)
                if not pending:
                    if after == 0:
                        return made
                    after = 0  # from the start once more: a chunk changed behind this pass waits there
                    continue
                vectors = embedder.embed([text for _, text in pending])
                with store.transaction() as session:
                    made += search_index.set_refined(
                        session, [(chunk_id, v) for (chunk_id, _), v in zip(pending, vectors, strict=True)]
                    )
            after = pending[-1][0]
            done += 1
    return made


def has_unrefined(store: Store, source_id: int) -> bool:
    """Are some of the source's chunks waiting for their vector?"""
    with store.transaction() as session:
        return search_index.has_unrefined(session, source_id)
