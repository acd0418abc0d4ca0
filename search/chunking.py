"""Cutting a table card into searchable chunks: one head chunk, then one chunk per 35 columns.

Each chunk has two texts: `text`, written for the embedding model (identifiers with their words spelled out:
`ORD_MST (order master)`), and `keywords`, for PostgreSQL full text with the `simple` configuration, in which
every identifier also appears split into words (`CUST_STAT_CD cust stat cd`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.identifiers import expand_words, humanise, identifier_text, split_identifier
from search.query_text import stem

COLUMNS_PER_CHUNK = 35
MAX_HEAD_COLUMNS = 300
CATEGORICAL_MAX = 50
_TOKEN = re.compile(r"[0-9A-Za-z_\u00C0-\uFFFF]+")


@dataclass(frozen=True)
class Chunk:
    kind: str  # "head" | "columns"
    ordinal: int
    text: str
    keywords: str


def keyword_text(text: str) -> str:
    """The text with every identifier followed by its words, their usual expansions and singulars, so `cust`
    and `customer` match CUST_STAT_CD and `invoices` matches INV_HDR."""
    parts = []
    for token in _TOKEN.findall(text):
        parts.append(identifier_text(token))
        split = split_identifier(token)
        extra = ({stem(w) for w in split} | set(expand_words(token))) - set(split)
        parts.extend(sorted(w for e in extra for w in e.split()))
    return " ".join(parts)


def _spelled(name: str) -> str:
    words = humanise(name)
    return f"{name} ({words})" if words and words != name.lower() else name


def head_text(card: dict[str, Any]) -> str:
    parts = [f"Table {_spelled(card['table'])} in database {card['database']}."]
    if card.get("purpose"):
        parts.append(f"{card['purpose']}.")
    if card.get("copy_of"):
        parts.append(f"{card['role']} copy of {card['copy_of']}.")
    elif card.get("role") not in (None, "live"):
        parts.append(f"Role: {card['role']}.")
    if card.get("primary_key"):
        parts.append("Key: " + ", ".join(card["primary_key"]) + ".")
    for fk in card.get("foreign_keys", []):
        parts.append(f"References {fk['references']} through {', '.join(fk['columns'])}.")
    names = [c["name"] for c in card.get("columns", [])[:MAX_HEAD_COLUMNS]]
    parts.append("Columns: " + ", ".join(names) + ".")
    return " ".join(parts)


def _categorical(column: dict[str, Any]) -> bool:
    """Values worth indexing: a handful of categories, not names, e-mails or ids that repeat a word everywhere."""
    distinct = (column.get("stats") or {}).get("distinct")
    return isinstance(distinct, int) and distinct <= CATEGORICAL_MAX


def column_text(column: dict[str, Any]) -> str:
    parts = [_spelled(column["name"])]
    if column.get("comment"):
        parts.append(column["comment"])
    if column.get("codes"):
        parts.append("codes " + ", ".join(f"{c['code']} {c['meaning'] or ''}".strip() for c in column["codes"][:15]))
    elif column.get("frequent") and column.get("family") == "text" and _categorical(column):
        parts.append("values " + ", ".join(str(v) for v, _ in column["frequent"][:5]))
    return " ".join(parts)


def chunks_for(card: dict[str, Any]) -> list[Chunk]:
    head = head_text(card)
    chunks = [Chunk("head", 0, head, keyword_text(head))]
    columns = card.get("columns", [])
    for ordinal, start in enumerate(range(0, len(columns), COLUMNS_PER_CHUNK)):
        block = columns[start : start + COLUMNS_PER_CHUNK]
        text = f"Table {_spelled(card['table'])} columns: " + "; ".join(column_text(c) for c in block)
        chunks.append(Chunk("columns", ordinal, text, keyword_text(text)))
    return chunks
