"""What names say: common enterprise abbreviations, and the affixes that mark copies and period partitions."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.text.identifiers import ABBREVIATIONS, expand_words, humanise

__all__ = ["ABBREVIATIONS", "Affix", "affixes", "expand_words", "humanise"]

BACKUP_WORDS = {"bak", "bk", "bkp", "backup", "old", "org", "orig", "prev", "archive", "arch", "save", "sav"}
STAGING_WORDS = {"tmp", "temp", "work", "wk", "stg", "stage", "staging", "load", "imp", "import"}
DRAFT_WORDS = {"copy", "cpy", "test", "tst", "dev", "new", "draft", "v2", "v3", "dup", "bak2", "test2"}
SNAPSHOT_WORDS = {"snap", "snapshot", "snp"}
COPY_ROLE_BY_WORD = (
    {w: "backup" for w in BACKUP_WORDS}
    | {w: "staging" for w in STAGING_WORDS}
    | {w: "draft" for w in DRAFT_WORDS}
    | {w: "snapshot" for w in SNAPSHOT_WORDS}
)
_PERIOD = re.compile(
    r"^(?:(19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])?|(19|20)\d{2}|(?:0[1-9]|1[0-2])(19|20)\d{2})$"
)
_VERSION = re.compile(r"^v\d{1,2}$")
_SEPARATOR = re.compile(r"[_\-\s.$]+")


@dataclass(frozen=True)
class Affix:
    """A name read as STEM + copy/period marker, e.g. ORD_MST_BAK → (ORD_MST, 'BAK', backup)."""

    stem: str
    marker: str
    kind: str  # "backup" | "staging" | "draft" | "snapshot" | "period"
    position: str  # "suffix" | "prefix"


def _marker_kind(marker: str) -> str | None:
    low = marker.lower()
    if low in COPY_ROLE_BY_WORD:
        return COPY_ROLE_BY_WORD[low]
    if _VERSION.match(low):
        return "draft"
    if _PERIOD.match(low):
        return "period"
    if low.isdigit() and len(low) <= 2:
        return "draft"  # ORD_MST_2, ORD_MST_01
    return None


def affixes(name: str) -> list[Affix]:
    """Every reading of `name` as a stem plus one marker (suffix or prefix), longest stem first."""
    found: list[Affix] = []
    parts = [p for p in _SEPARATOR.split(name) if p]
    if len(parts) < 2:
        match = re.match(r"^(.*?[A-Za-z])((?:19|20)\d{4,6})$", name)
        if match and _PERIOD.match(match.group(2)):
            found.append(Affix(match.group(1), match.group(2), "period", "suffix"))
        return found
    suffix = parts[-1]
    kind = _marker_kind(suffix)
    if kind is not None:
        stem = name[: name.rfind(suffix)].rstrip("_-. $")
        if stem:
            found.append(Affix(stem, suffix, kind, "suffix"))
    prefix = parts[0]
    kind = _marker_kind(prefix)
    if kind is not None and kind != "period":
        stem = name[len(prefix) :].lstrip("_-. $")
        if stem:
            found.append(Affix(stem, prefix, kind, "prefix"))
    return found
