"""Turning a question into full-text search words: identifiers split, common English words left out."""

from __future__ import annotations

import re

from core.text.name_words import default_name_words

_TOKEN = re.compile(r"[0-9A-Za-z_\u00C0-\uFFFF]+")
# Words that carry no information about which table holds the answer.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers him his how i if in into is it its itself just me more most my no nor not of off on once only or
    other our out over own same she should so some such than that the their theirs them then there these they this
    those through to too under until up very was we were what when where which while who whom why will with would
    you your yours list show give tell find get many much number count total please whose ones one each every
    value values table tables data database record records row rows""".split()
)


#: A token this long may be an identifier written as one run (`listedsecurity`): its words are searched too.
LONG_TOKEN = 10


def stem(word: str) -> str:
    """A crude English singular (`invoices` → invoice, `categories` → category): the `simple` configuration
    does not stem, and table text mixes singular and plural freely. Applied alike to indexed text and questions."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Distinct search words of a question, in order: identifiers also split (`ORD_MST` → ord_mst, ord, mst)."""
    found: list[str] = []
    for token in _TOKEN.findall(text):
        candidates = [token.lower()]
        if "_" in token or any(c.isupper() for c in token[1:]) or len(token) >= LONG_TOKEN:
            candidates += default_name_words().split(token)
        for candidate in candidates:
            for word in dict.fromkeys((candidate.strip("_"), stem(candidate.strip("_")))):
                if len(word) > 1 and word not in STOPWORDS and word not in found:
                    found.append(word)
    return found


def tsquery(text: str, common: frozenset[str] | set[str] = frozenset(), fallback: bool = True) -> str | None:
    """A to_tsquery expression matching any of the words (quoted, so no word is read as an operator).

    Words in `common` are left out, unless nothing else is left and `fallback` keeps them (the whole question:
    a term or phrase of common words only would match most of a large catalog and rank nothing).
    """
    terms = [w.replace("'", "") for w in words(text)]
    terms = [t for t in terms if t]
    rare = [t for t in terms if t not in common]
    terms = rare or (terms if fallback else [])
    if not terms:
        return None
    return " | ".join(f"'{t}'" for t in terms)
