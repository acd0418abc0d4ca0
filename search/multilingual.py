"""The second vector space: questions written in another script are searched by multilingual vectors.

The default encoder (MiniLM) knows English only: a question in Korean shares no word and little meaning with an
English-named table. The multilingual encoder (`use-multilingual`, search.encoder_use) finds those tables, but as the
only encoder it ranks English questions worse than MiniLM (`bench/results/multilingual.md`). So an installation keeps
both: every chunk has its MiniLM vector and, with `multilingual_vectors` on (the default), a second one from the
multilingual encoder; the question's script chooses which a search uses. A question whose letters are mostly of a
script other than Latin is searched by the multilingual vectors; any other by MiniLM's. Notes, approved examples and
the choice of database keep MiniLM's vectors (they hold no second one).

The second vectors are made after a source's chunks are written, for every chunk that has none (new, changed, or
indexed before the setting was on), so an interrupted run is finished by the next one. While none of the searched
sources has them, such a question is searched by MiniLM's vectors as before; once some have, chunks still without
one (a source not analysed since the setting was turned on) are found by words only until their next analysis.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from core.store.database import Store
from core.store.repositories import search_index
from search.encoders import Embedder, make_embedder

if TYPE_CHECKING:
    from core.config.settings import Settings
    from search.encoders import Vectors

#: Chunks embedded and written per batch (one UPDATE statement each).
BATCH = 256


def other_script(text: str) -> bool:
    """Are most of the text's letters of a script other than Latin (Hangul, kana, CJK ideographs, Cyrillic, Greek,
    Arabic, ...)? Digits, punctuation and spaces do not count; a text without letters is not."""
    latin = other = 0
    for ch in text:
        if not ch.isalpha():
            continue
        if ch.isascii() or unicodedata.name(ch, "").startswith("LATIN"):
            latin += 1
        else:
            other += 1
    return other > latin


class LazyEmbedder:
    """An embedder made on its first use: a worker that never meets a question in another script never loads it."""

    def __init__(self, name: str, make: Callable[[], Embedder]) -> None:
        self.name = name
        self._make = make
        self._made: Embedder | None = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            if self._made is None:
                self._made = self._make()
        return self._made.embed(texts)


_shared: dict[str, LazyEmbedder] = {}
_shared_lock = threading.Lock()


def multilingual_for(settings: Settings) -> Embedder | None:
    """The process's multilingual embedder for these settings (loaded on first use), or None where there is no second
    space: `multilingual_vectors` off, or the main encoder is the multilingual one already."""
    if not settings.multilingual_vectors or settings.embedding_encoder == "use-multilingual":
        return None
    home = settings.home
    key = str(home)
    with _shared_lock:
        found = _shared.get(key)
        if found is None:
            found = LazyEmbedder(
                "USE multilingual v3 (128 tokens), projected to 384 dimensions",
                lambda: make_embedder("use-multilingual", home),
            )
            _shared[key] = found
        return found


def index_multilingual(store: Store, source_id: int, embedder: Embedder, batch: int = BATCH) -> int:
    """Give every chunk of the source that has no multilingual vector one; returns how many were made. Each batch is
    committed as it is made, so an interrupted run keeps what it made and the next one goes on from there."""
    made = 0
    after = 0
    while True:
        with store.transaction() as session:
            pending = search_index.chunks_without_ml(session, source_id, after, batch)
        if not pending:
            return made
        vectors = embedder.embed([text for _, text in pending])
        with store.transaction() as session:
            search_index.set_ml_embeddings(
                session, [(chunk_id, v.tolist()) for (chunk_id, _), v in zip(pending, vectors, strict=True)]
            )
        made += len(pending)
        after = pending[-1][0]
