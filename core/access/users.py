"""Who a note, a turn or a search is for: a chat user (or the operator at the command line) by platform and id.

A `UserRef` names a person; a `Principal` (`core.access.permissions`) is what they may see. Notes are written by
and private to a `UserRef`; a search shows a private note only to the `UserRef` who wrote it.
"""

from __future__ import annotations

from typing import NamedTuple


class UserRef(NamedTuple):
    """A user by platform (`slack`, `teams`, or `operator` at the command line) and their id on that platform."""

    platform: str
    user_id: str

    def __str__(self) -> str:
        return f"{self.platform}:{self.user_id}"
