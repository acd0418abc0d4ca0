"""Text that every store and database accepts: no NUL characters, no unpaired UTF-16 surrogates.

PostgreSQL refuses NUL in text and JSON, and no text containing a lone surrogate (JSON's "\\ud800" decodes to one)
can be encoded as UTF-8, so either one in a chat message or in a model's tool argument would fail the transaction
that stores it. Text from outside (chat events, model replies, database values) passes through here at the
boundary: `storable` cleans it (NUL dropped, a lone surrogate replaced by U+FFFD), `unstorable` says what it held.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> list[str]:
    """What in `text` no store accepts, described for a person ("a NUL character (U+0000)"); [] when clean."""
    found = []
    for char in dict.fromkeys(_UNSTORABLE.findall(text)):
        code = f"U+{ord(char):04X}"
        found.append("a NUL character (U+0000)" if char == "\x00" else f"an unpaired surrogate ({code})")
    return found


def storable(text: str) -> str:
    """`text` with NUL characters removed and unpaired surrogates replaced by U+FFFD (a paired one cannot occur in
    a Python string read as UTF-8 or JSON, so every surrogate found is unpaired)."""
    if not _UNSTORABLE.search(text):
        return text
    return _UNSTORABLE.sub(lambda match: "" if match.group() == "\x00" else REPLACEMENT, text)


def storable_value(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings, numbers) with every string in it, keys included, made storable."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable_value(k): storable_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_value(v) for v in value]
    return value


def unstorable_in(value: Any) -> list[str]:
    """`unstorable` over every string of a JSON-like value (keys included)."""
    if isinstance(value, str):
        return unstorable(value)
    found: list[str] = []
    if isinstance(value, dict):
        parts: list[Any] = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple):
        parts = list(value)
    else:
        return found
    for part in parts:
        found.extend(problem for problem in unstorable_in(part) if problem not in found)
    return found
