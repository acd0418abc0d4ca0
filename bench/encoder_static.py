"""Static MiniLM vectors: one vector per word piece, a text's vector the weighted mean of its pieces' vectors.

The table is distilled from the int8 model (search.encoder_onnx) as model2vec does it: every word piece of the
vocabulary is embedded alone (`[CLS] piece [SEP]`), and a piece's weight grows with the logarithm of its rank in
the vocabulary (frequent pieces count less). Embedding is then a lookup and a mean: thousands of texts a second on
one core, at the cost of word order and context. Kept under TABLESCOUT_HOME/encoders next to the int8 model and
verified by hash the same way.

Not a tablescout encoder (`search.encoders` does not offer it): the encoder benchmark (bench.encoders) measures it
beside the ones it offers, as the `minilm-static` option.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError
from core.store.models import EMBEDDING_DIMENSIONS
from search import encoder_onnx
from search.encoder_cache import MANIFEST_NAME, ONNX_NAME, TOKENIZER_NAME, EncoderIntegrityError, sha256_of

if TYPE_CHECKING:
    from search.encoder_base import Vectors

RECIPE = "minilm-static-v1"
TABLE_NAME = "pieces.npy"
#: word pieces before this id are padding, unused slots and single characters in BERT's vocabulary
FIRST_WORD = 1996


def _verify(entry: Path, onnx_sha: str) -> None:
    try:
        manifest: dict[str, Any] = json.loads((entry / MANIFEST_NAME).read_text())
    except (OSError, ValueError) as exc:
        raise EncoderIntegrityError(f"the encoder cache {entry} has no readable {MANIFEST_NAME} ({exc})") from exc
    if manifest.get("recipe") != RECIPE or manifest.get("source_onnx_sha256") != onnx_sha:
        raise EncoderIntegrityError(f"the encoder cache {entry} was not made by {RECIPE} from this int8 model")
    for name in (TABLE_NAME, TOKENIZER_NAME):
        path = entry / name
        actual = sha256_of(path) if path.is_file() else "missing"
        if actual != manifest.get("sha256", {}).get(name):
            raise EncoderIntegrityError(
                f"the cached encoder file {path} has sha256 {actual}, not the one recorded when it was made: it was "
                f"changed or damaged, so it is not used. Delete the folder {entry} and it is made again"
            )


def prepare(home: Path, model_dir: str | None = None) -> Path:
    int8 = encoder_onnx.prepare(home, model_dir)
    onnx_sha = sha256_of(int8 / ONNX_NAME)
    entry = int8.parent / f"{RECIPE}-{onnx_sha[:16]}"
    if not entry.exists():
        with encoder_onnx.locked(int8.parent):
            if not entry.exists():
                _make(entry, int8, onnx_sha)
    _verify(entry, onnx_sha)
    return entry


def _make(entry: Path, int8: Path, onnx_sha: str) -> None:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(int8 / TOKENIZER_NAME))
    size = tokenizer.get_vocab_size()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    if cls is None or sep is None:
        raise ConfigError("the static encoder needs a BERT word-piece tokenizer ([CLS] and [SEP])")
    session = ort.InferenceSession(str(int8 / ONNX_NAME), providers=["CPUExecutionProvider"])
    table = np.zeros((size, EMBEDDING_DIMENSIONS), dtype=np.float32)
    for start in range(0, size, 1024):
        ids = np.arange(start, min(size, start + 1024), dtype=np.int64)
        batch = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        (table[ids],) = session.run(None, {"input_ids": batch, "attention_mask": np.ones_like(batch)})
    rank = np.maximum(np.arange(size) - FIRST_WORD, 1).astype(np.float32)
    table *= np.log1p(rank)[:, None]
    work = Path(tempfile.mkdtemp(prefix=".making-", dir=entry.parent))
    try:
        np.save(work / TABLE_NAME, table)
        shutil.copyfile(int8 / TOKENIZER_NAME, work / TOKENIZER_NAME)
        manifest = {
            "recipe": RECIPE,
            "source_onnx_sha256": onnx_sha,
            "sha256": {name: sha256_of(work / name) for name in (TABLE_NAME, TOKENIZER_NAME)},
        }
        (work / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
        os.replace(work, entry)
    finally:
        shutil.rmtree(work, ignore_errors=True)


class StaticEmbedder:
    space = "all-MiniLM-L6-v2 static"

    def __init__(self, entry: Path, max_tokens: int) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        self._table = np.load(entry / TABLE_NAME)
        self._tokenizer = Tokenizer.from_file(str(entry / TOKENIZER_NAME))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_tokens)
        self._lock = threading.Lock()
        self.name = f"all-MiniLM-L6-v2 static word pieces ({max_tokens} tokens)"

    @classmethod
    def prepared(cls, home: Path, model_dir: str | None = None, max_tokens: int = 128) -> StaticEmbedder:
        return cls(prepare(home, model_dir), max_tokens)

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        out = np.zeros((len(texts), EMBEDDING_DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        for row, encoding in enumerate(encodings):
            if encoding.ids:
                vector = self._table[encoding.ids].mean(axis=0)
                norm = float(np.linalg.norm(vector))
                out[row] = vector / norm if norm > 0 else vector
        return out
