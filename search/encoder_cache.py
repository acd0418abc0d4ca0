"""The int8 encoder's cache entries: their file names and recipe, the hashes that verify them, the lock under which
one is made, and copying a verified entry between the home's cache and the machine's.

An entry is a folder holding the ONNX model, its tokenizer and a manifest recording the recipe, the hashes of the
weights it was made from and of its own files. `search.encoder_onnx` makes entries; `search.encoder_use` keeps its
own entries in the same cache root under the same lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ConfigError

#: Names the export-and-quantise procedure; a change to it makes a new cache entry instead of reusing an old one.
RECIPE = "minilm-onnx-int8-v1"
ONNX_NAME = "model.onnx"
TOKENIZER_NAME = "tokenizer.json"
MANIFEST_NAME = "manifest.json"

log = logging.getLogger(__name__)


class EncoderIntegrityError(ConfigError):
    """A model file's hash is not the one expected: the model is refused rather than used."""


def sha256_of(path: Path) -> str:
    """The hex sha256 of the file's bytes (read in blocks)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Source:
    """The weights an entry is made from: their folder, the sha256 of each source file, and whether they are the
    bundled package's."""

    directory: Path
    hashes: dict[str, str]
    bundled: bool

    @property
    def key(self) -> str:
        """What the cache entry is named by: the recipe and the weights' hash."""
        return f"{RECIPE}-{self.hashes['model.safetensors'][:16]}"


def cache_root(home: Path) -> Path:
    """The folder under `home` that holds the encoders' cache entries."""
    return home / "encoders"


def verify(entry: Path, source: Source) -> dict[str, Any]:
    """The entry's manifest, after checking that its files are the ones it recorded, made from `source`."""
    manifest_path = entry / MANIFEST_NAME
    try:
        manifest: dict[str, Any] = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as exc:
        raise EncoderIntegrityError(
            f"the encoder cache {entry} has no readable {MANIFEST_NAME} ({exc}); delete the folder and it is made "
            "again from the installed weights"
        ) from exc
    if manifest.get("recipe") != RECIPE or manifest.get("source_sha256") != source.hashes:
        raise EncoderIntegrityError(
            f"the encoder cache {entry} was not made by {RECIPE} from the weights in {source.directory}; delete the "
            "folder and it is made again from the installed weights"
        )
    for name in (ONNX_NAME, TOKENIZER_NAME):
        path = entry / name
        expected = manifest.get("sha256", {}).get(name)
        actual = sha256_of(path) if path.is_file() else "missing"
        if actual != expected:
            raise EncoderIntegrityError(
                f"the cached encoder file {path} has sha256 {actual}, not {expected} recorded when it was made: it "
                "was changed or damaged, so it is not used. Delete the folder "
                f"{entry} and it is made again from the installed weights"
            )
    return manifest


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """One process at a time makes a cache entry (two workers starting together wait for each other)."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def copy_verified(shared: Path, entry: Path, source: Source) -> bool:
    """Copy the machine's entry `shared` to `entry` when it is there and verifies against `source` (True); False,
    copying nothing, otherwise. The copy appears whole or not at all."""
    if not shared.is_dir():
        return False
    try:
        verify(shared, source)
    except EncoderIntegrityError as exc:
        log.warning("not using the machine's copy of the encoder: %s", exc)
        return False
    work = Path(tempfile.mkdtemp(prefix=".copying-", dir=entry.parent))
    try:
        for name in (ONNX_NAME, TOKENIZER_NAME, MANIFEST_NAME):
            shutil.copyfile(shared / name, work / name)
        os.replace(work, entry)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return True


def share(entry: Path, shared: Path, source: Source) -> None:
    """Leave a copy of `entry` at `shared` unless one is there. Best effort: a read-only or missing user cache only
    means the next installation makes its own."""
    try:
        shared.parent.mkdir(parents=True, exist_ok=True)
        if shared.exists():
            return
        work = Path(tempfile.mkdtemp(prefix=".copying-", dir=shared.parent))
        try:
            for name in (ONNX_NAME, TOKENIZER_NAME, MANIFEST_NAME):
                shutil.copyfile(entry / name, work / name)
            os.replace(work, shared)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    except OSError as exc:
        log.info("could not leave the encoder in the machine's cache %s: %s", shared, exc)
