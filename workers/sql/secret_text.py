"""Keeping the mask key out of what a database says back (SPEC §6): error text scrubbed of every form of the key.

PyMySQL writes bound values into the statement's text, so MariaDB/MySQL error messages that quote the statement
("... near '<text>' at line 1") could quote the padded keys that `hash` masks bind. Before such a message reaches
the model, the user or the log, the quoted text is cut where the key's first placeholder would start (`UNHEX(`),
and any run of hex digits that is part of a form of the key is replaced, so not even a piece of it is left.
"""

from __future__ import annotations

import re

from core.access.mask_key import MaskKey

#: Hex runs this long or longer that occur in a form of the key are removed (a shorter run says almost nothing).
MIN_RUN = 4
_HEX_RUN = re.compile(rf"[0-9a-fA-F]{{{MIN_RUN},}}")
_NEAR_END = re.compile(r"' at line \d+")
_KEY_CALL = re.compile(r"UNHEX\s*\(", re.IGNORECASE)
SCRUBBED = "…"


def scrubbed(message: str, key: MaskKey | None) -> str:
    """`message` without any form of `key` (unchanged when there is no key)."""
    if key is None:
        return message
    start = message.find("near '")
    if start >= 0:
        cut = _KEY_CALL.search(message, start)
        if cut is not None:
            end = _NEAR_END.search(message, cut.start())
            message = message[: cut.start()] + SCRUBBED + (message[end.start() :] if end is not None else "")
    forms = [form.lower() for form in key.secret_texts() if form]

    def replace(match: re.Match[str]) -> str:
        return SCRUBBED if any(match.group(0).lower() in form for form in forms) else match.group(0)

    message = _HEX_RUN.sub(replace, message)
    for form in key.secret_texts():
        if form:
            message = message.replace(form, SCRUBBED)
    return message
