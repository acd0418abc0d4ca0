"""Words inside identifiers written as one run (`ACCOUNTSPAYABLEANDACCRUEDLIABILITIES`, `CUSTSTATCD`).

Separators, camelCase and digit edges are split first (`core.text.identifiers.split_identifier`); a remaining run of
`MIN_RUN` letters or more is segmented with `wordsegment`'s unigram and bigram model of English, in which the
catalog's own words (parts of names that are written apart elsewhere, words of comments) and the known
abbreviations count as common words, so `CUSTSTATCD` reads "cust stat cd" in a catalog that also has
`CUST_NO` and `STAT_CD`. A segmentation is kept only when known words make up most of the run; otherwise the run
stays whole. The model loads once per process (about 0.7 s, 95 MB) and only when a run needs it.
"""

from __future__ import annotations

import re
import threading
from collections import ChainMap
from collections.abc import Iterable
from functools import cache
from typing import Any

from core.text.identifiers import ABBREVIATIONS, split_identifier

#: Shorter runs are words or abbreviations already (`cust`, `ordno` is rare enough to leave alone).
MIN_RUN = 6
#: Segmenting longer runs is slow (the model's recursion) and such runs are rarely identifiers.
MAX_RUN = 80
#: The count a catalog word is given in the model (out of about 10^12 words): that of a common English word, so
#: a catalog word is preferred to a rare dictionary word of the same letters.
CATALOG_WORD_COUNT = 2.0e7
#: A piece the model knows less often than this is not taken as a word (the unigram list has many misspellings).
MIN_KNOWN_COUNT = 2.0e5
#: A segmentation is kept when known words make up this share of the run's letters (`antidilutive` is rare).
KNOWN_SHARE = 0.75
#: Off only to measure what segmentation adds (bench/retrieval.py); call `default_name_words.cache_clear()` after.
SEGMENT = True
_LETTERS = re.compile(r"^[a-z]+$")
_lock = threading.Lock()


@cache
def _model() -> Any:
    import wordsegment

    with _lock:
        segmenter = wordsegment.Segmenter()
        segmenter.load()
    return segmenter


_NAME_TOKEN = re.compile(r"[0-9A-Za-z_]+")


def catalog_words(texts: Iterable[str]) -> set[str]:
    """Words the catalog writes apart somewhere: parts of split names and words of comments and purposes."""
    found: set[str] = set()
    seen: set[str] = set()  # a catalog repeats its names across tables: each is split once
    for text in texts:
        for token in _NAME_TOKEN.findall(text):
            if token in seen:
                continue
            seen.add(token)
            parts = split_identifier(token)
            if len(parts) > 1 or "_" in token:
                found.update(p for p in parts if 2 <= len(p) <= 20 and _LETTERS.match(p))
    return found


#: Names whose words a splitter remembers before it starts afresh.
SPLITS_KEPT = 200_000


class NameWords:
    """Splits identifiers into words, segmenting runs with the model plus a catalog vocabulary."""

    def __init__(self, vocabulary: Iterable[str] = (), segment: bool | None = None) -> None:
        self.vocabulary = frozenset(w.lower() for w in vocabulary) | frozenset(ABBREVIATIONS)
        self.segment_runs = SEGMENT if segment is None else segment
        self._cache: dict[str, list[str]] = {}
        self._splits: dict[str, tuple[str, ...]] = {}  # name → its words: a catalog splits each name many times
        self._segmenter: Any = None

    def _bound(self) -> Any:
        if self._segmenter is None:
            import wordsegment

            base = _model()
            segmenter = wordsegment.Segmenter()
            extra = {w: max(base.unigrams.get(w, 0.0), CATALOG_WORD_COUNT) for w in self.vocabulary}
            segmenter.unigrams = ChainMap(extra, base.unigrams)
            segmenter.bigrams = base.bigrams
            segmenter.total = base.total
            segmenter.words = base.words
            segmenter.limit = base.limit
            self._segmenter = segmenter
        return self._segmenter

    def _known(self, piece: str) -> bool:
        if piece in self.vocabulary:
            return True
        count = _model().unigrams.get(piece, 0.0)
        return bool(count >= MIN_KNOWN_COUNT)

    def segment(self, run: str) -> list[str]:
        """Words of one lower-case run of letters; the run itself when no reading into known words exists."""
        if not self.segment_runs or not MIN_RUN <= len(run) <= MAX_RUN or not _LETTERS.match(run):
            return [run]
        if run in self.vocabulary:
            return [run]
        cached = self._cache.get(run)
        if cached is None:
            pieces = list(self._bound().segment(run))
            known = sum(len(p) for p in pieces if self._known(p))
            cached = pieces if len(pieces) > 1 and known >= KNOWN_SHARE * len(run) else [run]
            self._cache[run] = cached
        return cached

    def split(self, name: str) -> list[str]:
        """`ORD_MST` → ord, mst; `LISTEDSECURITY` → listed, security; `orderDate` → order, date."""
        found = self._splits.get(name)
        if found is None:
            words: list[str] = []
            for part in split_identifier(name):
                words.extend(self.segment(part))
            if len(self._splits) >= SPLITS_KEPT:
                self._splits.clear()
            found = self._splits[name] = tuple(words)
        return list(found)

    def expand(self, name: str) -> list[str]:
        """Words with common abbreviations written out: `ORDDTL` → order, detail."""
        return [ABBREVIATIONS.get(w, w) for w in self.split(name)]

    def humanise(self, name: str) -> str:
        return " ".join(self.expand(name))

    def identifier_text(self, name: str) -> str:
        """The identifier followed by its words, for indexing: `CUSTSTATCD cust stat cd`."""
        words = " ".join(self.split(name))
        return f"{name} {words}" if words and words != name.lower() else name


@cache
def default_name_words() -> NameWords:
    """Segmentation with the model and the known abbreviations only (no catalog at hand)."""
    return NameWords()
