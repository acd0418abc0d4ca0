"""Slack mrkdwn and the messages made of it: escaping, a model's Markdown as mrkdwn, cutting text to Slack's limits
without breaking an escape, monospace widths, splitting long text into sections (code fences kept balanced), and the
section, context and code blocks every Slack message here is built from. Pure: no SDK, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

SECTION_LIMIT = 3000  # characters of mrkdwn in one section or context element
FALLBACK_LIMIT = 3000  # characters of the notification text (Slack allows more; a notification needs less)
FENCE = "```"


@dataclass(frozen=True)
class SlackMessage:
    """A message to post: `text` is the notification fallback, `blocks` what Slack shows."""

    text: str
    blocks: list[dict[str, Any]]


def escape(text: str) -> str:
    """Slack's three control characters escaped, so user and database text never becomes a mention or link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def mrkdwn(text: str) -> str:
    """A model's Markdown answer as Slack mrkdwn: escaped, `**bold**` and `# headings` bold, `[text](url)` links."""
    out = escape(text)
    out = _HEADING.sub(r"*\1*", out)
    out = _BOLD.sub(r"*\1*", out)
    return _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1).replace('|', '/')}>", out)


def cut(text: str, limit: int, note: str = "…") -> str:
    """`text` within `limit` characters, ending in `note` when cut; never splits an escape like `&amp;`."""
    if len(text) <= limit:
        return text
    keep = text[: max(0, limit - len(note))]
    amp = keep.rfind("&")
    if amp != -1 and ";" not in keep[amp:] and len(keep) - amp <= 5:
        keep = keep[:amp]
    return keep + note


def display_width(text: str) -> int:
    """Columns `text` takes in a monospace font: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1 for ch in text)


def fit_width(text: str, width: int) -> str:
    """`text` within `width` display columns, ending in "…" when cut."""
    if display_width(text) <= width:
        return text
    out = ""
    for ch in text:
        if display_width(out + ch) > width - 1:
            break
        out += ch
    return out + "…"


def pad(text: str, width: int, right: bool) -> str:
    """`text` padded with spaces to `width` display columns, on the left when `right` (aligned right)."""
    gap = " " * (width - display_width(text))
    return gap + text if right else text + gap


def split_sections(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, split at line ends; a code fence open at a split is closed
    there and reopened in the next piece."""
    room = limit - 2 * (len(FENCE) + 1)
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    in_fence = False
    fence_at_start = False

    def flush() -> None:
        nonlocal current, size, fence_at_start
        if not current:
            return
        body = "\n".join(current)
        if fence_at_start:
            body = FENCE + "\n" + body
        if in_fence:
            body += "\n" + FENCE
        pieces.append(body)
        current, size, fence_at_start = [], 0, in_fence

    for line in text.split("\n"):
        while len(line) > room:  # a single line longer than a piece
            flush()
            current, size = [line[:room]], room
            line = line[room:]
        if size + len(line) + 1 > room:
            flush()
        current.append(line)
        size += len(line) + 1
        if line.lstrip().startswith(FENCE) and line.strip().count(FENCE) % 2 == 1:
            in_fence = not in_fence
    flush()
    return pieces


def section_block(text: str) -> dict[str, Any]:
    """A section of mrkdwn `text` (already escaped), cut to Slack's limit."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": cut(text, SECTION_LIMIT)}}


def context_block(*texts: str) -> dict[str, Any]:
    """A small grey context line of up to ten mrkdwn elements (already escaped), each cut to Slack's limit."""
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": cut(t, SECTION_LIMIT)} for t in texts[:10]]}


def code_block(text: str, limit: int, what: str) -> str:
    """`text` (already escaped) as a code block within `limit` characters, cut with a note saying what was cut."""
    fenced = f"{FENCE}{text}{FENCE}"
    if len(fenced) <= limit:
        return fenced
    hidden = len(text)
    note = f"\n… ({what} cut here, {{}} more characters)"
    body = cut(text, limit - len(FENCE) * 2 - len(note) - 8, "")
    return f"{FENCE}{body}{note.format(hidden - len(body))}{FENCE}"
