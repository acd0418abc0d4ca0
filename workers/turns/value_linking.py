"""Linking the question's words to the values a column holds, across spelling, case and script (SPEC §4).

A question names a value the way its asker writes it: `부산` for the city a column stores as `Busan`, `busan` for
`Busan`, `Seol` for `Seoul`. The value index (`search.values`) matches whole words of the same script; this module
adds what it cannot:
- `korean_words`: Korean words in Latin letters (the Revised Romanization of Korean, syllable by syllable, with the
  particles that follow a noun taken off each word), so that a Korean question's names meet the English values;
- `linked_values`: the index's matches for the romanized question, as the asker may see them, per table;
- `held_match`: the value among those a column holds that a literal means (same letters without case, same
  romanization, or a close spelling), for rewriting a filter's literal to the value the data holds.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.store.models import Source, SourceTable
from search.values import value_matches as index_matches
from search.values import visible_matches
from workers.tools.base import ToolContext, viewer_reads

#: Hangul syllables: U+AC00 + (initial * 21 + vowel) * 28 + final.
_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3
_INITIALS = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"]
_VOWELS = [
    "a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo",
    "u", "wo", "we", "wi", "yu", "eu", "ui", "i",
]  # fmt: skip
_FINALS = [
    "", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l",
    "m", "p", "p", "t", "t", "ng", "t", "t", "k", "t", "p", "t",
]  # fmt: skip
#: A final consonant read as the next syllable's initial when that one begins with a vowel (ㅇ): 서울 stays "seoul",
#: 종로 is "jongno" only by rules this module leaves out; a name search tolerates both through `held_match`.
_LIAISON = {"k": "g", "t": "d", "p": "b", "l": "r", "n": "n", "m": "m", "ng": "ng"}
#: Korean particles (josa) and copula endings that follow a noun inside one written word, longest first: "부산으로"
#: is the noun "부산" and "으로" (to). Grammar of the language, not a list of values.
_PARTICLES = sorted(
    """으로부터 에서부터 까지는 에서는 으로는 에게서 이라고 이라는 으로서 으로써 에서 에게 까지 부터 으로 이나
    처럼 보다 하고 이랑 라고 라는 에는 에도 의 은 는 이 가 을 를 와 과 도 만 로 에 랑 나 별""".split(),
    key=len,
    reverse=True,
)
_HANGUL_WORD = re.compile(r"[\uAC00-\uD7A3]+")
#: A literal and a held value this close (difflib's ratio, compared without case) spell the same name.
CLOSE_SPELLING = 0.86


def has_hangul(text: str) -> bool:
    return _HANGUL_WORD.search(text) is not None


def _syllables(word: str) -> list[tuple[str, str, str]]:
    parts = []
    for char in word:
        code = ord(char) - _HANGUL_FIRST
        parts.append((_INITIALS[code // 588], _VOWELS[(code % 588) // 28], _FINALS[code % 28]))
    return parts


def romanize_word(word: str) -> str:
    """One word of Hangul syllables in Latin letters (Revised Romanization, the common sound changes only)."""
    parts = _syllables(word)
    out = []
    for index, (initial, vowel, final) in enumerate(parts):
        following = parts[index + 1][0] if index + 1 < len(parts) else None
        if final and following == "" and final in _LIAISON and final != "ng":
            out.append(initial + vowel)
            parts[index + 1] = (_LIAISON[final], *parts[index + 1][1:])
            continue
        if final == "l" and following == "r":
            parts[index + 1] = ("l", *parts[index + 1][1:])
        out.append(initial + vowel + final)
    return "".join(out)


def stem_korean(word: str) -> str:
    """`word` without a particle that follows the noun (kept whole when that would leave less than one syllable)."""
    for particle in _PARTICLES:
        if word.endswith(particle) and len(word) > len(particle):
            return word[: -len(particle)]
    return word


def korean_words(text: str) -> list[tuple[str, str]]:
    """(word as written, its romanization) for each Hangul word of `text`, and again without the particle that may
    end it: "종로" is a name ending in a syllable that is also a particle, "부산으로" a name and a particle."""
    found: list[tuple[str, str]] = []
    for match in _HANGUL_WORD.finditer(text):
        for form in dict.fromkeys((match.group(0), stem_korean(match.group(0)))):
            found.append((form, romanize_word(form)))
    return found


def _plain(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in folded if c.isalnum())


def held_match(literal: str, held: Iterable[str]) -> str | None:
    """The value among `held` that `literal` means: the same letters without case or accents, the same romanization
    (a Korean literal), else the one closest in spelling when close enough; None when none is."""
    values = [v for v in dict.fromkeys(held) if isinstance(v, str) and v.strip()]
    forms = [_plain(latin) for _, latin in korean_words(literal)] if has_hangul(literal) else [_plain(literal)]
    forms = [f for f in forms if f]
    if not forms:
        return None
    wanted = forms[-1]  # a Korean word without its particle
    for form in forms:
        for value in values:
            if _plain(value) == form:
                return value
    scored = [(difflib.SequenceMatcher(None, wanted, _plain(v)).ratio(), v) for v in values]
    best = max(scored, default=(0.0, ""))
    return best[1] if best[0] >= CLOSE_SPELLING and len(wanted) >= 3 else None


@dataclass(frozen=True)
class LinkedValue:
    """A value of `table.column` the question names (`said`: as the question wrote it, when in another script;
    `meaning`: what the code `value` means, where the question named a code by its meaning)."""

    table: str
    column: str
    value: str
    said: str = ""
    meaning: str = ""


def linked_values(context: ToolContext, question: str, source_ids: Sequence[int]) -> list[LinkedValue]:
    """Values of the databases `source_ids` that the question names in Korean, found through their romanization in
    the value index, on tables and columns the asker may see (as search's own value signal is filtered); [] for a
    question without Hangul (search's value signal has those already)."""
    words = korean_words(question)
    if not words or not source_ids:
        return []
    text = " ".join(latin for _, latin in words)
    session = context.session
    found = index_matches(session, text, source_ids)
    rows = {table_id: row for table_id in found if (row := session.get(SourceTable, table_id)) is not None}
    names = {row.source_id: name for row in rows.values() if (name := _source_name(context, row.source_id))}
    shown = visible_matches(context.principal, found, rows, names, viewer_reads(context))
    linked = []
    for table_id, matches in shown.items():
        for match in matches:
            if match.group:
                continue  # the name of a column's group of codes: no value to filter on
            said = next((k for k, latin in words if _plain(latin) == _plain(match.said)), match.meaning or "")
            linked.append(LinkedValue(rows[table_id].name, match.column, match.value, said, match.meaning or ""))
    return linked


def _source_name(context: ToolContext, source_id: int) -> str:
    source = context.session.get(Source, source_id)
    return source.name if source is not None else ""
