"""`@name` tokens in a chat message: what may pin a database (SPEC §8).

A token is `@` and a name of a letter then letters, digits, `_` or `-` (up to 63 characters), standing on its own:
not inside an address (`ops@erp.example`) or a longer word. Which tokens pin which database is the bot's reading of
the message (bot/messages.py); a token that names no registered database stays in the question as written, and the
turn answers it with the databases the user may ask (`unknown_pins`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

PIN = re.compile(r"(?<![\w@./+-])@(?P<name>[A-Za-z][A-Za-z0-9_-]{0,62})(?![\w-])(?!\.\w)")
#: What may stand right before and after a token that reads as a pin of its own.
_BEFORE = "("
_AFTER = ",.;:!?)"


def standalone(text: str, start: int, end: int) -> bool:
    """Whether the token at `text[start:end]` stands on its own: space or an opening bracket before it, space or
    punctuation after it."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return (before.isspace() or before in _BEFORE) and (after.isspace() or after in _AFTER)


def unknown_pins(text: str, labels: Collection[str]) -> list[str]:
    """The `@name` tokens of `text` standing on their own whose name is no database name or alias (`labels`,
    lower-case), in order, each once."""
    found: list[str] = []
    for match in PIN.finditer(text):
        name = match.group("name")
        if name.lower() not in labels and standalone(text, match.start(), match.end()) and name not in found:
            found.append(name)
    return found
