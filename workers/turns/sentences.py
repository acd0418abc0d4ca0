"""The first line of an answer written from its rows: one sentence in the asker's words (SPEC §4).

No model writes it, so every number in it is a cell of the result, formatted as every surface formats it
(`core.answer.values`). The sentence reuses the question's own words rather than column names:

- one value: "How many orders were placed in 2024?" → "4,750 orders were placed in 2024.";
  "What was the total order amount in 2023?" → "The total order amount in 2023 was 3,691,987,750.50.";
  "2024년 부산으로 배송된 주문은 몇 건인가요?" → "2024년 부산으로 배송된 주문은 351건입니다."
- one row of several values: the subject, then each value with its column's header;
- a breakdown or a list: what the table below holds and its highest point ("Total sales amount by month in 2024,
  highest in 2024-03: 312,450.00."), or its first entry when the rows keep the query's order.

A question whose shape none of these fits gets a plain sentence: its subject and the value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.model import ResultTable
from core.answer.values import MEASURES, ValueKind, column_header
from workers.turns.question_shape import asked_breakdown
from workers.turns.result_codes import Meanings, with_meanings

_ASKS_HOW_MANY = re.compile(r"^\s*how\s+(many|much)\s+(?P<rest>.+?)\s*\??\s*$", re.IGNORECASE)
_WHICH_DID = re.compile(
    r"^\s*(which|what|who)\s+(?P<noun>(\w+\s+){0,3}?)(?P<verb>\w+ed|had|has|have|was|were|sold|made|bought|paid|"
    r"spent|got|won|lost|took|gave|sent|brought|wrote|ran|led|holds?|owns?)\s+(?P<rest>.+?)\s*\??\s*$",
    re.IGNORECASE,
)
_THERE = re.compile(r"^(?P<noun>.+?)\s+(?P<verb>are|were|is|was)\s+there\b(?P<tail>.*)$", re.IGNORECASE)
_DID_WE = re.compile(r"^(?P<noun>.+?)\s+(?P<aux>do|does|did)\s+(?P<clause>.+)$", re.IGNORECASE)
#: Words that start the phrase after a clause's verb ("... carry in 2024", "... file last year").
_PHRASE_STARTS = frozenset(
    "in on at for from to during last this next since by with per each before after between within".split()
)
_IRREGULAR_PAST = {
    "make": "made",
    "buy": "bought",
    "sell": "sold",
    "send": "sent",
    "pay": "paid",
    "take": "took",
    "get": "got",
    "have": "had",
    "spend": "spent",
    "bring": "brought",
    "give": "gave",
    "win": "won",
    "lose": "lost",
    "hold": "held",
    "run": "ran",
    "write": "wrote",
    "see": "saw",
    "find": "found",
    "do": "did",
    "ship": "shipped",
    "stop": "stopped",
    "plan": "planned",
    "put": "put",
    "set": "set",
    "cut": "cut",
    "keep": "kept",
    "leave": "left",
}
_WHAT_IS = re.compile(
    r"^\s*(what|which)\s+(?P<verb>is|was|are|were)\s+(?P<subject>.+?)\s*\??\s*$",
    re.IGNORECASE,
)
_LEADING = re.compile(
    r"^\s*(please\s+)?(what\s+(is|was|are|were)|which\s+(is|was|are|were)|who\s+(is|was|are|were)|show(\s+me)?|"
    r"list|give\s+me|tell\s+me|"
    r"how\s+much\s+(is|was|were|are)?|how\s+much|how\s+many|what|which)\s+",
    re.IGNORECASE,
)
_OUR = re.compile(r"^(our|my|the|all)\s+", re.IGNORECASE)
_KO_COUNT = re.compile(
    r"몇\s*(?P<unit>건|개|명|번|곳|회|종)(?P<ending>인가요|입니까|이에요|예요|이죠|일까요|이나|나)?\s*[?\uff1f]?\s*$"
)
_KO_AMOUNT = re.compile(r"(?P<topic>은|는)?\s*(얼마|무엇|뭐)(인가요|입니까|예요|이에요|일까요|죠)?\s*[?\uff1f]?\s*$")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_QUESTION_ENDS = "?\uff1f "  # the question mark, its full-width form (Korean, Japanese, Chinese) and spaces


def answer_sentence(question: str, table: ResultTable, meanings: Meanings | None = None) -> str:
    """The sentence that answers `question` from `table`'s rows; `meanings`: what the codes of its columns mean,
    written after each code the sentence names (`workers.turns.result_codes`)."""
    cells = with_meanings(table.cells(), meanings or {})
    if not table.rows or not table.columns:
        return ""
    if len(table.rows) == 1 and asked_breakdown(question) and len(table.columns) > 1:
        return breakdown(question, table, cells)  # one group of a breakdown is still a breakdown's row
    if len(table.rows) == 1 and len(table.columns) == 1:
        return one_value(question, cells[0][0], table.column_kinds()[0])
    if len(table.rows) == 1:
        return one_row(question, table, cells[0])
    return breakdown(question, table, cells)


def one_row(question: str, table: ResultTable, cells: Sequence[str]) -> str:
    """One row of several values: "Which customer placed the most orders?" → "Bukhan Foods Corp. (C000001) placed
    the most orders."; a count asked for first → its sentence, then the other values by their headers."""
    text = " ".join(question.split())
    kinds = table.column_kinds()
    which = _WHICH_DID.match(text)
    if which is not None and kinds[0] not in MEASURES:
        headers = table.headers()
        named = (v for v, k in zip(cells[1:], kinds[1:], strict=False) if k not in MEASURES)
        names = ", ".join(dict.fromkeys(v for v in named if v not in cells[0]))  # no "B20 (B20)"
        measured = "; ".join(
            f"{h}: {v}" for h, v, k in zip(headers[1:], cells[1:], kinds[1:], strict=False) if k in MEASURES
        )
        said = f"{cells[0]}{f' ({names})' if names else ''} {_said_of_one(which.group('verb'))} {which.group('rest')}"
        return _end(f"{said} ({measured})" if measured else said)
    first, _, _ = re.split(r",?\s+and\s+", text, maxsplit=1)[0].partition("?")
    if _ASKS_HOW_MANY.match(first) and kinds[0] in MEASURES:
        lead = one_value(first, cells[0], kinds[0]).rstrip(".")
        rest = "; ".join(f"{column_header(c)}: {v}" for c, v in zip(table.columns[1:], cells[1:], strict=False))
        return _end(f"{lead}; {rest}")
    pairs = "; ".join(f"{column_header(c)}: {v}" for c, v in zip(table.columns, cells, strict=False))
    return f"{answer_subject(question)} \u2014 {pairs}."


def one_value(question: str, value: str, kind: ValueKind) -> str:
    """A single result value said as the question asked for it."""
    text = " ".join(question.split())
    if _HANGUL.search(text):
        return _korean(text, value)
    asked = _ASKS_HOW_MANY.match(text)
    if asked is not None and kind in MEASURES:
        rest = asked.group("rest")
        there = _THERE.match(rest)
        if there is not None:
            verb, noun = there.group("verb").lower(), there.group("noun")
            if value == "1":
                verb, noun = _SINGULAR_VERBS.get(verb, verb), _singular_phrase(noun)
            return _end(f"There {verb} {value} {noun}{there.group('tail')}")
        did = _DID_WE.match(rest)
        if did is not None:
            said = _subject_did(did.group("noun"), did.group("aux").lower(), did.group("clause"), value, asked)
            if said is not None:
                return said
        return _end(f"{value} {_agreeing(rest) if value == '1' else rest}")
    which = _WHICH_DID.match(text)
    if which is not None and kind not in MEASURES:
        return _end(f"{value} {_said_of_one(which.group('verb'))} {which.group('rest')}")
    what = _WHAT_IS.match(text)
    if what is not None:
        subject = _OUR.sub("the ", what.group("subject"), count=1)
        return _end(f"{_capital(subject)} {what.group('verb').lower()} {value}")
    return _end(f"{answer_subject(question)}: {value}")


def _subject_did(noun: str, aux: str, clause: str, value: str, asked: re.Match[str]) -> str | None:
    """ "How many orders did customer C000551 place?" → "Customer C000551 placed 10 orders."; "How much revenue
    did we make in 2024?" → "Revenue in 2024: 1,234,567.50." (a quantity, not a count, keeps its noun first)."""
    words = clause.split()
    end = next((i for i, w in enumerate(words) if i > 0 and w.lower() in _PHRASE_STARTS), len(words))
    verb_at = next((i for i in range(end - 1, 0, -1) if words[i].isalpha() and words[i].islower()), None)
    tail = " ".join(words[end:])
    if asked.group(1).lower() == "much" or verb_at is None:
        return _end(f"{_capital(noun)}{' ' + tail if tail else ''}: {value}")
    subject = " ".join(words[:verb_at])
    verb = words[verb_at]
    if aux == "did":
        verb = _past(verb)
    elif aux == "does":
        verb = "has" if verb == "have" else verb + ("es" if verb.endswith(("s", "sh", "ch", "x")) else "s")
    between = " ".join(words[verb_at + 1 : end])
    parts = [_capital(subject), verb, value, _singular_phrase(noun) if value == "1" else noun, between, tail]
    return _end(" ".join(p for p in parts if p))


def _past(verb: str) -> str:
    if verb in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[verb]
    if verb.endswith("e"):
        return verb + "d"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def breakdown(question: str, table: ResultTable, cells: Sequence[Sequence[str]]) -> str:
    """What a table of several rows holds: the subject, and its highest point (or its first row when the query
    kept its own order, as a top-N list does)."""
    kinds = table.column_kinds()
    measure = next((i for i in range(len(kinds) - 1, -1, -1) if kinds[i] in MEASURES), None)
    label = next((i for i in range(len(kinds)) if kinds[i] not in MEASURES), None)
    rows = len(table.rows)
    count = f"{rows}{'+' if table.truncated else ''} row{'' if rows == 1 and not table.truncated else 's'}"
    subject = answer_subject(question)
    listed = measure is None or label is None  # no label with a measure: a list, not a breakdown
    if listed and rows > 1 and _ASKS_HOW_MANY.match(" ".join(question.split())) and not asked_breakdown(question):
        # one count asked for and a list returned: say what the list is, not a count it does not hold
        return f"The query returned {count} for this question, listed below."
    if measure is None or label is None:
        return f"{subject}: {count}, listed below."
    values = [_number(row[measure]) for row in table.rows]
    if any(v is None for v in values):
        return f"{subject}: {count}, listed below."
    if rows == 1:
        if _HANGUL.search(question):
            return f"{subject}: 1개 행, {cells[0][label]}의 {cells[0][measure]}입니다."
        return f"{subject}: one row, {cells[0][label]}: {cells[0][measure]}."
    top = max(range(len(values)), key=lambda i: values[i] or 0.0)
    timed = kinds[label] in (ValueKind.DATE, ValueKind.YEAR)
    where = f"in {cells[top][label]}" if timed else f"for {cells[top][label]}"
    if _HANGUL.search(question):
        return f"{subject}: {len(table.rows)}개 행, 가장 높은 값은 {cells[top][label]}의 {cells[top][measure]}입니다."
    return f"{subject}, highest {where}: {cells[top][measure]}."


#: A verb that agrees with a plural subject, and its form for one ("1 order was cancelled").
_SINGULAR_VERBS = {"were": "was", "are": "is", "have": "has", "do": "does"}
#: Plural endings and what they become in the singular, tried in order; words ending in ss, us or is are not plural.
_PLURAL_ENDINGS = (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"), ("xes", "x"), ("s", ""))


def _said_of_one(verb: str) -> str:
    """A question's verb said of the one thing that answers it: "Which warehouses hold …?" → "W01 holds …";
    a past or already singular verb as it is."""
    lower = verb.lower()
    if lower in _SINGULAR_VERBS:
        return _SINGULAR_VERBS[lower]
    return f"{verb}s" if lower in ("hold", "own") else verb


def _singular(word: str) -> str | None:
    """`word`'s regular singular ("entries" → "entry", "boxes" → "box", "orders" → "order"), or None when it does
    not read as a regular plural. The sentence only needs the noun the count of one counts; an irregular plural
    stays as written."""
    lower = word.lower()
    if len(lower) < 3 or not lower.isalpha() or lower.endswith(("ss", "us", "is")) or not lower.endswith("s"):
        return None
    for ending, singular in _PLURAL_ENDINGS:
        if lower.endswith(ending):
            return word[: len(word) - len(ending)] + singular
    return None


def _singular_phrase(phrase: str) -> str:
    """A noun phrase said of one ("VIP customers" → "VIP customer"): its last plural word made singular."""
    words = phrase.split()
    for i in range(len(words) - 1, -1, -1):
        singular = _singular(words[i])
        if singular is not None:
            words[i] = singular
            break
    return " ".join(words)


def _agreeing(rest: str) -> str:
    """What follows a count of one, made to agree with it: "orders were cancelled" → "order was cancelled",
    "orders have more than five lines" → "order has more than five lines"; the head noun is the plural word before
    the first verb (or the first plural word when no verb agrees)."""
    words = rest.split()
    verb_at = next((i for i, w in enumerate(words) if w.lower() in _SINGULAR_VERBS), None)
    nouns = words[:verb_at] if verb_at is not None else words
    head = next((i for i in range(len(nouns) - 1, -1, -1) if _singular(nouns[i]) is not None), None)
    if verb_at is None:
        head = next((i for i, w in enumerate(nouns) if _singular(w) is not None), None)
    if head is None:
        return rest
    words[head] = _singular(words[head]) or words[head]
    if verb_at is not None:
        words[verb_at] = _SINGULAR_VERBS[words[verb_at].lower()]
    return " ".join(words)


def _korean(question: str, value: str) -> str:
    counted = _KO_COUNT.search(question)
    if counted is not None:
        return f"{question[: counted.start()].rstrip()} {value}{counted.group('unit')}입니다."
    amount = _KO_AMOUNT.search(question)
    if amount is not None:
        stem = question[: amount.start()].rstrip()
        return f"{stem}{amount.group('topic') or ''} {value}입니다."
    return f"{question.rstrip(_QUESTION_ENDS)}: {value}"


def answer_subject(question: str) -> str:
    """The question's subject, from its own words: "What was our total sales amount by month in 2024?" → "Total
    sales amount by month in 2024"."""
    text = " ".join(question.split()).rstrip(_QUESTION_ENDS + ".!")
    if _HANGUL.search(text):
        return re.sub(r"\s*(은|는)$", "", text)
    stripped = _LEADING.sub("", text, count=1)
    stripped = _OUR.sub("", stripped, count=1)
    return _capital(stripped or text)


def _number(cell: object) -> float | None:
    if isinstance(cell, bool):
        return None
    if isinstance(cell, int | float):
        return float(cell)
    if isinstance(cell, str):
        try:
            return float(cell)
        except ValueError:
            return None
    return None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _end(text: str) -> str:
    text = text.rstrip(_QUESTION_ENDS)
    return text if text.endswith((".", "!")) else text + "."
