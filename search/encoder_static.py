"""Static MiniLM vectors: one vector per word piece, a text's vector the weighted mean of its pieces' vectors.

The table is distilled from the int8 model (search.encoder_onnx) as model2vec does it: every word piece of the
vocabulary is embedded alone (`[CLS] piece [SEP]`), and a piece's weight grows with the logarithm of its rank in
the vocabulary (frequent pieces count less). Embedding is then a lookup and a mean: thousands of texts a second on
one core, at the cost of word order and context. Kept under TABLESCOUT_HOME/encoders next to the int8 model (and in
the machine's cache like it) and verified by hash the same way.

It is the fast encoder of two-speed indexing (`search.refinement`): new and changed chunks are written with its
vector and become searchable at once, and the int8 model's vector replaces it afterwards. It is no
`embedding_encoder` choice: it knows no word order or context (the encoder benchmark's Korean ERP questions: hybrid
pooled CR@5 0.31 against the int8 model's 0.48, bench/results/encoders.md). The encoder benchmark
(bench.encoders) measures it beside the others as the `minilm-static` option.
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
#: Words whose word pieces an encoder remembers before it starts afresh.
WORDS_KEPT = 500_000


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
    """The verified table for the int8 model of `model_dir` under `home`: copied from the machine's cache when a
    verified one is there (as the int8 model is), made otherwise (about 15 s on two cores) and left there too."""
    int8 = encoder_onnx.prepare(home, model_dir)
    onnx_sha = sha256_of(int8 / ONNX_NAME)
    name = f"{RECIPE}-{onnx_sha[:16]}"
    entry = int8.parent / name
    if not entry.exists():
        with encoder_onnx.locked(int8.parent):
            if not entry.exists() and not _copy_verified(encoder_onnx.machine_cache_root() / name, entry, onnx_sha):
                _make(entry, int8, onnx_sha)
                _share(entry, encoder_onnx.machine_cache_root() / name)
    _verify(entry, onnx_sha)
    return entry


_FILES = (TABLE_NAME, TOKENIZER_NAME, MANIFEST_NAME)


def _copy_verified(shared: Path, entry: Path, onnx_sha: str) -> bool:
    if not shared.is_dir():
        return False
    try:
        _verify(shared, onnx_sha)
    except EncoderIntegrityError:
        return False
    work = Path(tempfile.mkdtemp(prefix=".copying-", dir=entry.parent))
    try:
        for name in _FILES:
            shutil.copyfile(shared / name, work / name)
        os.replace(work, entry)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return True


def _share(entry: Path, shared: Path) -> None:
    """Best effort: a read-only or missing user cache only means the next installation makes its own."""
    try:
        shared.parent.mkdir(parents=True, exist_ok=True)
        if shared.exists():
            return
        work = Path(tempfile.mkdtemp(prefix=".copying-", dir=shared.parent))
        try:
            for name in _FILES:
                shutil.copyfile(entry / name, work / name)
            os.replace(work, shared)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    except OSError:
        return


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
        self._max_tokens = max_tokens
        self._words: dict[str, list[int]] = {}  # word → its word pieces (`_pieces`)
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
            pieces = [self._pieces(text) for text in texts]
        for row, ids in enumerate(pieces):
            if ids:
                vector = self._table[ids].mean(axis=0)
                norm = float(np.linalg.norm(vector))
                out[row] = vector / norm if norm > 0 else vector
        return out

    def _pieces(self, text: str) -> list[int]:
        """The text's first `max_tokens` word pieces, put together from each space-separated word's own: BERT's
        normaliser works character by character and its pre-tokeniser splits at every space, so a word's pieces do
        not depend on its neighbours. A catalog repeats its words across tables, and tokenizing each table's whole
        column list to keep 128 pieces was most of the time of this encoder."""
        if len(self._words) >= WORDS_KEPT:
            self._words = {}
        ids: list[int] = []
        for word in text.split(" "):
            if not word:
                continue
            found = self._words.get(word)
            if found is None:
                found = self._words[word] = self._tokenizer.encode(word, add_special_tokens=False).ids
            ids.extend(found)
            if len(ids) >= self._max_tokens:
                return ids[: self._max_tokens]
        return ids
