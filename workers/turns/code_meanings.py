"""How a question names a code by its meaning: the words of the question and of a code's meaning, and the share of
a meaning's words the question says ("CJ Logistics" for the carrier code CJ, "IT" for the department D50). Used by
the answer checks (`workers.turns.answer_checks`) and by the statement fixes before a run
(`workers.turns.code_lookups`)."""

from __future__ import annotations

import re
from typing import Any

from search.query_text import STOPWORDS, stem

_TOKEN = re.compile(r"[0-9A-Za-z\u00C0-\uFFFF]+")


def words(text: str) -> set[str]:
    """The words of `text`, lower-cased, each also as its stem."""
    found: set[str] = set()
    for token in _TOKEN.findall(text.lower()):
        found.update((token, stem(token)))
    return found


def base_forms(word: str) -> set[str]:
    """`word` and its dictionary forms ("paid" → pay, "sold" → sell, "shipped" → ship), from lemminflect's English
    tables: a question writes the verb a column is named for in whatever form its sentence needs."""
    from lemminflect import getAllLemmas  # its tables load on first use (about half a second), in workers only

    return {word} | {lemma.lower() for lemmas in getAllLemmas(word).values() for lemma in lemmas}


def meaning_words(meaning: str) -> set[str]:
    """Content words of a code's meaning; an acronym ("IT", "VIP") counts even where it spells a common word."""
    return {
        stem(t.lower())
        for t in _TOKEN.findall(meaning)
        if (t.isupper() and len(t) >= 2) or (t.lower() not in STOPWORDS and len(t) >= 2)
    }


def named_share(meaning: str, said: set[str]) -> float:
    """The share of the meaning's content words among `said` (a word of four letters or more matches a said word
    that starts with its first four)."""
    content = meaning_words(meaning)
    if not content:
        return 0.0
    hits = sum(
        1 for w in content if w in said or any(len(w) >= 4 and s.startswith(w[:4]) and len(s) >= 4 for s in said)
    )
    return hits / len(content)


def meant_codes(column: dict[str, Any]) -> list[dict[str, Any]]:
    """The codes of a card's column with their meanings; [] when the card knows no meanings for most of them."""
    codes = [c for c in column.get("codes") or [] if isinstance(c, dict) and c.get("code") is not None]
    meant = [c for c in codes if c.get("meaning")]
    return codes if codes and len(meant) * 2 >= len(codes) else []


def named_code(question: str, column: dict[str, Any], whole: bool = False) -> str | None:
    """The one code of `column` whose meaning the question names best (with `whole`, names every word of);
    None when none or several tie."""
    said = words(question)
    scores = {str(c["code"]): named_share(str(c.get("meaning") or ""), said) for c in meant_codes(column)}
    best = max(scores.values(), default=0.0)
    winners = [code for code, score in scores.items() if score == best and best > 0 and (best == 1.0 or not whole)]
    return winners[0] if len(winners) == 1 else None
