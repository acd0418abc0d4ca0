"""A model's Markdown answer as plain text, for the places that show no formatting: a chat notification, Slack's
message fallback `text`, the summary of a Teams card.

`**4750** orders` becomes `4750 orders`: emphasis, headings, inline code, links (their text is kept), quotes and
code fences lose their markup; list bullets become `- `. Text inside backticks is kept exactly as written, and an
underscore or asterisk inside a word or standing alone (`ORD_MST`, `EMP_*`, `5 * 3`) is not emphasis, so table
names and arithmetic stay intact.
"""

from __future__ import annotations

import re

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_FENCE_LINE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n?", re.MULTILINE)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_QUOTE = re.compile(r"^[ \t]*>[ \t]?", re.MULTILINE)
_BULLET = re.compile(r"^([ \t]*)[*+][ \t]+", re.MULTILINE)
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]+)\]\([^)\s]+(?:[ \t]+\"[^\"\n]*\")?\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_STAR_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_UNDERSCORE_EMPHASIS = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")


def plain_text(markdown: str) -> str:
    """`markdown` without its markup; line breaks are kept."""
    text = _FENCE_LINE.sub("", markdown)
    pieces = _CODE_SPAN.split(text)
    # split() yields text, then (fence, code) pairs: only the text between code spans is Markdown.
    out: list[str] = []
    for index, piece in enumerate(pieces):
        kind = index % 3
        if kind == 0:
            out.append(_unmark(piece))
        elif kind == 2:
            out.append(piece)
    return "".join(out)


def _unmark(text: str) -> str:
    text = _HEADING.sub(r"\1", text)
    text = _QUOTE.sub("", text)
    text = _BULLET.sub(r"\1- ", text)
    text = _IMAGE_OR_LINK.sub(r"\1", text)
    for pattern in (_STRONG, _STRIKE):
        text = pattern.sub(lambda m: m.group(m.lastindex or 0), text)
    text = _STAR_EMPHASIS.sub(r"\1", text)
    return _UNDERSCORE_EMPHASIS.sub(r"\1", text)
