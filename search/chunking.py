"""Cutting a table card into searchable chunks: one head chunk, then one chunk per 35 columns.

Each chunk has two texts: `text`, written for the embedding model (identifiers with their words spelled out:
`ORD_MST (order master)`), and `keywords`, for PostgreSQL full text with the `simple` configuration, in which
every identifier also appears split into words (`CUST_STAT_CD cust stat cd`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from core.text.name_words import NameWords, default_name_words
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


#: Each splitter's indexed words per identifier: a catalog repeats its column names across tables (and the head
#: chunk repeats every column), and splitting a name is most of the time of cutting cards into chunks.
_TOKEN_WORDS: WeakKeyDictionary[NameWords, dict[str, str]] = WeakKeyDictionary()
_TOKEN_WORDS_MAX = 200_000  # identifiers remembered per splitter before it starts afresh


def _memo(names: NameWords) -> dict[str, str]:
    memo = _TOKEN_WORDS.get(names)
    if memo is None or len(memo) >= _TOKEN_WORDS_MAX:
        memo = _TOKEN_WORDS[names] = {}
    return memo


def _token_words(token: str, names: NameWords, memo: dict[str, str]) -> str:
    split = names.split(token)
    extra = ({stem(w) for w in split} | set(names.expand(token))) - set(split)
    found = " ".join([names.identifier_text(token), *sorted(w for e in extra for w in e.split())])
    memo[token] = found
    return found


def keyword_text(text: str, names: NameWords | None = None) -> str:
    """The text with every identifier followed by its words, their usual expansions and singulars, so `cust`
    and `customer` match CUST_STAT_CD and `invoices` matches INV_HDR."""
    names = names or default_name_words()
    memo = _memo(names)  # once per text: a card's texts hold thousands of identifiers
    return " ".join([memo.get(token) or _token_words(token, names, memo) for token in _TOKEN.findall(text)])


def _spelled(name: str, names: NameWords) -> str:
    words = names.humanise(name)
    return f"{name} ({words})" if words and words != name.lower() else name


def head_text(card: dict[str, Any], names: NameWords) -> str:
    parts = [f"Table {_spelled(card['table'], names)} in database {card['database']}."]
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
    columns = [c["name"] for c in card.get("columns", [])[:MAX_HEAD_COLUMNS]]
    parts.append("Columns: " + ", ".join(columns) + ".")
    return " ".join(parts)


def _categorical(column: dict[str, Any]) -> bool:
    """Values worth indexing: a handful of categories, not names, e-mails or ids that repeat a word everywhere."""
    distinct = (column.get("stats") or {}).get("distinct")
    return isinstance(distinct, int) and distinct <= CATEGORICAL_MAX


def column_text(column: dict[str, Any], names: NameWords) -> str:
    parts = [_spelled(column["name"], names)]
    if column.get("comment"):
        parts.append(column["comment"])
    if column.get("codes"):
        parts.append("codes " + ", ".join(f"{c['code']} {c['meaning'] or ''}".strip() for c in column["codes"][:15]))
    elif column.get("frequent") and column.get("family") == "text" and _categorical(column):
        parts.append("values " + ", ".join(str(v) for v, _ in column["frequent"][:5]))
    return " ".join(parts)


def chunks_for(card: dict[str, Any], names: NameWords | None = None) -> list[Chunk]:
    """The chunks of a card; `names` splits its identifiers (with the vocabulary of its catalog)."""
    names = names or default_name_words()
    head = head_text(card, names)
    chunks = [Chunk("head", 0, head, keyword_text(head, names))]
    columns = card.get("columns", [])
    for ordinal, start in enumerate(range(0, len(columns), COLUMNS_PER_CHUNK)):
        block = columns[start : start + COLUMNS_PER_CHUNK]
        text = f"Table {_spelled(card['table'], names)} columns: " + "; ".join(column_text(c, names) for c in block)
        chunks.append(Chunk("columns", ordinal, text, keyword_text(text, names)))
    return chunks
