"""The installation's secret behind `hash` column masks (SPEC §6): where it lives, how it is made and rotated.

A `hash` mask shows HMAC-SHA-256 of the value under this key, so equal values still hash equal within one
installation (joins, COUNT(DISTINCT) keep working) while nobody without the key can test a guess against a hash.
The key comes from the `TABLESCOUT_MASK_KEY` setting when it is set (what a deployment with several machines uses,
from one secret), otherwise from `$TABLESCOUT_HOME/mask.key`, which `tablescout init` creates (mode 0600) and
`tablescout mask-key rotate` replaces atomically. The key's bytes are its text as written (UTF-8), so copying the
file's line into the setting keeps every hash as it was. A file that is missing, unreadable, not private to its
owner or too short is an error: nothing ever falls back to an unkeyed hash. The file is looked at again on every
use (one stat), so a running worker follows a rotation from its next query; a key from the setting changes when
the process restarts with a new value.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.errors import TablescoutError

if TYPE_CHECKING:
    from core.config.settings import Settings

MASK_KEY_FILE = "mask.key"
SETTING = "TABLESCOUT_MASK_KEY"
#: Shortest key accepted, in characters (a generated key has 64 hex digits: 256 bits).
MIN_KEY_CHARS = 32
_BLOCK = 64  # SHA-256's block size, in bytes: HMAC pads its key to this


class MaskKeyError(TablescoutError):
    """The mask key cannot be used; the message says where it was looked for and what to do (for operators)."""


@dataclass(frozen=True, repr=False)
class MaskKey:
    """The key for `hash` masks. Its repr never shows the key; `origin` says where it came from."""

    secret: bytes
    origin: str

    def __repr__(self) -> str:
        return f"MaskKey(from {self.origin})"

    def digest(self, data: bytes) -> str:
        """HMAC-SHA-256 of `data`, as 64 lower-case hex digits."""
        return hmac.new(self.secret, data, hashlib.sha256).hexdigest()

    @property
    def inner_pad(self) -> str:
        """HMAC's inner padded key (the key, padded to 64 bytes, XOR 0x36), in hex: SQL engines that have SHA-256
        but no HMAC compute SHA256(outer || SHA256(inner || value)) with it."""
        return bytes(b ^ 0x36 for b in self._block_key()).hex()

    @property
    def outer_pad(self) -> str:
        """HMAC's outer padded key (XOR 0x5c), in hex."""
        return bytes(b ^ 0x5C for b in self._block_key()).hex()

    def secret_texts(self) -> tuple[str, ...]:
        """Every form of the key that could be written into a statement or a message, for scrubbing them out."""
        return (self.inner_pad, self.outer_pad, self.secret.hex(), self.secret.decode("utf-8", "replace"))

    def _block_key(self) -> bytes:
        key = hashlib.sha256(self.secret).digest() if len(self.secret) > _BLOCK else self.secret
        return key.ljust(_BLOCK, b"\0")


@dataclass(frozen=True)
class KeyState:
    """What `ensure_key_file` found or did: `created` a file, found an `existing` one, or the key is the `setting`."""

    status: Literal["created", "existing", "setting"]
    path: Path | None


def key_path(settings: Settings) -> Path:
    return settings.home / MASK_KEY_FILE


def mask_key(settings: Settings) -> MaskKey:
    """The key `hash` masks use now; raise MaskKeyError when there is none that may be used."""
    if settings.mask_key is not None:
        return MaskKey(_checked_text(settings.mask_key.get_secret_value(), SETTING), SETTING)
    return _cache.read(key_path(settings))


def ensure_key_file(settings: Settings) -> KeyState:
    """Create the key file (mode 0600) when the key does not come from the setting and no file exists yet; check
    an existing one. Raise MaskKeyError when the file that exists cannot be used."""
    if settings.mask_key is not None:
        mask_key(settings)  # a setting that is too short is reported now, not at the first masked query
        return KeyState("setting", None)
    path = key_path(settings)
    created = _write(path, replace=False)
    _cache.read(path)
    return KeyState("created" if created else "existing", path)


def rotate_key_file(settings: Settings) -> Path:
    """Replace the key file with a new key, atomically (a reader sees the old key or the new one, never a part).
    Raise MaskKeyError when the key comes from the setting, which only the operator's secret store can change."""
    if settings.mask_key is not None:
        raise MaskKeyError(
            f"the mask key comes from the {SETTING} setting, so it is not rotated here: put a new secret of at least "
            f"{MIN_KEY_CHARS} characters into {SETTING} (for example `openssl rand -hex 32`) and restart tablescout"
        )
    path = key_path(settings)
    _write(path, replace=True)
    _cache.read(path)
    return path


def new_key_text() -> str:
    return secrets.token_hex(32)


# --- the file --------------------------------------------------------------------------------------------------


def _checked_text(text: str, origin: str) -> bytes:
    key = text.strip()
    if len(key) < MIN_KEY_CHARS or any(c.isspace() for c in key):
        raise MaskKeyError(
            f"the mask key in {origin} must be one word of at least {MIN_KEY_CHARS} characters (it has "
            f"{len(key)}); `tablescout mask-key rotate` writes a new one"
        )
    return key.encode("utf-8")


def _write(path: Path, *, replace: bool) -> bool:
    """Write a new key to `path` through a private temporary file; False when `replace` is false and a file was
    already there (it is kept, whoever wrote it first)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(new_key_text() + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, 0o600)
            if replace:
                os.replace(temporary, path)
            else:
                try:
                    os.link(temporary, path)  # fails when the file exists: never overwrite a key in use
                except FileExistsError:
                    return False
                except OSError:  # a file system without hard links: create the file itself, exclusively
                    if not _create_exclusive(path):
                        return False
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        _sync_directory(path.parent)
    except OSError as exc:
        raise MaskKeyError(f"cannot write the mask key file {path}: {exc.strerror or exc}") from exc
    return True


def _create_exclusive(path: Path) -> bool:
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(new_key_text() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return True


def _sync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be opened and synced
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


class _FileCache:
    """The key read from each file, read again when the file's identity, size, time or mode changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[Path, tuple[tuple[int, ...], MaskKey]] = {}

    def read(self, path: Path) -> MaskKey:
        try:
            info = path.stat()
        except FileNotFoundError as exc:
            raise MaskKeyError(
                f"there is no mask key file {path}: run `tablescout init` to create it, or set {SETTING}"
            ) from exc
        except OSError as exc:
            raise MaskKeyError(f"cannot read the mask key file {path}: {exc.strerror or exc}") from exc
        if not stat.S_ISREG(info.st_mode):
            raise MaskKeyError(f"the mask key file {path} is not a regular file")
        if os.name == "posix" and info.st_mode & 0o077:
            raise MaskKeyError(
                f"the mask key file {path} may be read by others (mode {stat.S_IMODE(info.st_mode):04o}); "
                f"only its owner may read it: chmod 600 {path}"
            )
        signature = (info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_mode)
        with self._lock:
            cached = self._keys.get(path)
            if cached is not None and cached[0] == signature:
                return cached[1]
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise MaskKeyError(f"cannot read the mask key file {path}: {exc}") from exc
        key = MaskKey(_checked_text(text, str(path)), str(path))
        with self._lock:
            self._keys[path] = (signature, key)
        return key


_cache = _FileCache()
