"""The business words a search status line names ("Looking for tables about orders in erp…").

Deterministic and cheap (no model call): the content words of the search's question and terms, kept only when the
asker wrote them in this conversation, so a status line (read by everyone in a channel) repeats the asker's own
words and never a name the model took from a card, a note or a result; when the model rephrased everything, no
words are named. Identifiers (ORD_MST, words with digits or underscores), numbers, question
words, generic analytics words and common verbs are left out; a plural and its singular count once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from search.query_text import STOPWORDS, stem

#: At most this many words are named.
MAX_WORDS = 2
MIN_LENGTH = 3
APOSTROPHES = "'\u2019"
_TOKEN = re.compile(rf"[\w{APOSTROPHES}-]+")

#: Words of a question that say how to count or when, not what: never the subject of a search.
GENERIC = frozenset(
    """average avg sum max min maximum minimum mean median highest lowest largest smallest biggest greatest least
    top bottom best worst first last latest earliest recent new old per across versus vs compare compared ratio
    percent percentage proportion share trend trends year years month months week weeks day days today yesterday
    tomorrow quarter quarters hour hours time times ever currently current now overall altogether including
    include includes without within like also there than whether either neither amount amounts sort sorted
    rank ranked show shows showing give giving tell find finding get got make made did does done has have
    want wanted need needed know see look looking can could would should let please thanks thank hi hello hey
    what's whats who's answer answers question questions query queries sql select spend spent buy bought sell sold
    pay paid place take took come came say said use used happen happened ask asked compute calculate calculated
    break breakdown grouped based""".split()
)


def _tokens(text: str) -> list[str]:
    found = []
    for token in _TOKEN.findall(text):
        token = token.strip(APOSTROPHES + "-")
        for apostrophe in APOSTROPHES:
            token = token.removesuffix(apostrophe + "s")
        if token and not any(c.isdigit() or c == "_" for c in token):
            found.append(token)
    return found


def _is_content(word: str) -> bool:
    lowered = word.casefold()
    if len(lowered) < MIN_LENGTH or lowered in STOPWORDS or lowered in GENERIC:
        return False
    # placed, shipped, monthly: how, not what
    return not (len(lowered) > 5 and lowered.endswith(("ed", "ly")))


def _pick(texts: Iterable[str], allowed: dict[str, str]) -> list[str]:
    """Content words of `texts` whose singular is a key of `allowed`, each once, as `allowed` writes them."""
    picked: list[str] = []
    seen: set[str] = set()
    for text in texts:
        for token in _tokens(text):
            lowered = token.casefold()
            key = stem(lowered)
            if key in seen or not _is_content(token) or key not in allowed:
                continue
            seen.add(key)
            picked.append(allowed[key])
    return picked


def subject_words(searched: Sequence[str], user_texts: Sequence[str]) -> list[str]:
    """Up to MAX_WORDS business words of `searched` (the search's question and terms), in order, that the asker
    wrote in `user_texts` (named as the asker wrote them); [] when there are none."""
    own: dict[str, str] = {}
    for text in user_texts:
        for index, token in enumerate(_tokens(text)):
            opening = index == 0 and not token.isupper()  # "Customers in Busan?": customers, Busan, VIP
            own.setdefault(stem(token.casefold()), token.casefold() if opening else token)
    return _pick(searched, own)[:MAX_WORDS]


def joined(items: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"
