"""Reading a chat message: the bot mention, `@database` pins and "remember this" notes (SPEC §5, §8).

Pure text; the adapters pass the message text as the platform sends it (Slack markup such as `<@U123>`, Teams
`<at>Name</at>` tags, HTML entities) and get back the question, the pinned databases and, for a note, the
knowledge to remember.

Mentions. The bot's own mention is removed: Slack `<@BOT>` / `<@BOT|name>` wherever it appears when the bot's
user id is known (otherwise only a mention that opens the message), Teams `<at>Name</at>` when Name is the bot's
name (otherwise only a tag that opens the message). Other people's mentions stay as they are (Slack) or become
their plain name (Teams); Slack channel, group and link markup becomes readable text. None of them is ever a pin.

Pins. `@name` is a pin when `name` is a registered database name or alias (any case) and the token stands on its
own (not inside an address such as `ops@erp.example`). Pins at the start of the message, or after the question
has ended (`... last month? @erp`), are removed from the question; a pin inside a sentence keeps its place
without the `@` (`orders in @erp last month` → `orders in erp last month`), so the sentence still reads. Any other
`@word` is left untouched.

Notes. A message is a note when "remember this" or "remember:" (any case; "remember this:", "Remember this -",
"remember —" alike) opens a sentence: at the start of the message, after a sentence break (`.`, `!`, `?`, `;`,
`:` or a new line), or after a polite lead-in ("please", "ok", "also" ...). "do you remember this customer?" is
therefore not a note, and neither is "Remember this customer?" (a trigger without punctuation after it whose
sentence ends in a question mark is a question). The knowledge is the text after the trigger ("this" included
when no punctuation follows it: "remember this table is unused"); when nothing follows the trigger
("ORD_MST_BAK is a copy, please remember this!"), the text before it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from core.text.pins import PIN, standalone

# Slack wraps mentions, channels, links and special mentions in <...>; Teams wraps mentions in <at>...</at>.
_MARKUP = re.compile(r"<at>(?P<at>.*?)</at>|<(?P<slack>[@#!][^<>\n]*|(?:https?|mailto|tel):[^<>\n]*)>", re.I | re.S)
_SLACK_USER = re.compile(r"@(?P<id>[UWB][A-Z0-9]+)(?:\|(?P<name>[^>]*))?")
_INLINE_SPACE = re.compile(r"[ \t\u00a0]+")
_PIN_SEPARATORS = " \t\n,;:"
_AFTER_LEADING_PINS = re.compile(r"[\s,;:]*(?:[\-\u2013\u2014]+\s+)?")
_OPENING_SEPARATORS = re.compile(r"^[\s,;:]*(?:[\-\u2013\u2014]+\s+)?")
_LEADING_MENTIONS = re.compile(r"^(?:\s*@[\w-]+[,:]?)+\s*")

_TRIGGER = re.compile(
    r"\bremember(?:"
    r"(?P<this>\s+this\b)(?P<punct>[ \t]*[:\-\u2013\u2014,.!]+)?"  # remember this[:-,.!]
    r"|[ \t]*(?P<colon>:|[\-\u2013\u2014]+(?=\s))"  # remember: / remember -
    r")",
    re.I,
)
_LEAD_IN = re.compile(r"(?:\b(?:please|pls|plz|hey|ok|okay|also|and|so|oh|btw|fyi)\b[ \t,]*)+$", re.I)
_SENTENCE_BREAK = ".!?;:\n"
_TRAILING_BREAK = _SENTENCE_BREAK + ",-\u2013\u2014\u2026"
_FOLLOWING_SEPARATORS = " \t\n:,.!-\u2013\u2014"


@dataclass(frozen=True)
class ParsedMessage:
    text: str
    pins: list[str] = field(default_factory=list)
    remember: bool = False
    note_text: str | None = None


@dataclass(frozen=True)
class _Pin:
    start: int
    end: int
    database: str
    label: str


def _render_markup(match: re.Match[str], bot_user_id: str | None, bot_name: str | None, opening: bool) -> str:
    """The readable text for one piece of Slack or Teams markup ('' for the bot's own mention)."""
    if match.group("at") is not None:
        name = html.unescape(match.group("at")).strip()
        is_bot = name.casefold() == bot_name.casefold() if bot_name else opening
        return "" if is_bot else name
    body = match.group("slack")
    user = _SLACK_USER.fullmatch(body)
    if user is not None:
        is_bot = user.group("id") == bot_user_id if bot_user_id else opening
        return "" if is_bot else match.group(0)
    target, _, label = body.partition("|")
    if body.startswith("#"):
        return f"#{label}" if label else target
    if body.startswith("!"):
        if label:
            return label
        return "@" + target[1:].split("^")[0]
    return label or target


def _plain(text: str) -> str:
    return html.unescape(text).replace("\u00a0", " ")


def _clean(text: str, bot_user_id: str | None, bot_name: str | None) -> list[tuple[str, bool]]:
    """The message as (piece, is_plain) pieces: markup rendered, entities decoded; plain pieces may hold pins."""
    pieces: list[tuple[str, bool]] = []
    position = 0
    for match in _MARKUP.finditer(text):
        before = text[position : match.start()]
        opening = not "".join(p for p, _ in pieces).strip() and not before.strip()
        pieces.append((_plain(before), True))
        pieces.append((_render_markup(match, bot_user_id, bot_name, opening), False))
        position = match.end()
    pieces.append((_plain(text[position:]), True))
    return pieces


def _find_pins(pieces: list[tuple[str, bool]], labels: Mapping[str, str]) -> tuple[str, list[_Pin]]:
    text_parts: list[str] = []
    pins: list[_Pin] = []
    offset = 0
    for piece, plain in pieces:
        if plain:
            for match in PIN.finditer(piece):
                database = labels.get(match.group("name").lower())
                if database is not None:
                    pins.append(_Pin(offset + match.start(), offset + match.end(), database, match.group("name")))
        text_parts.append(piece)
        offset += len(piece)
    return "".join(text_parts), pins


def _standalone(text: str, pin: _Pin) -> bool:
    return standalone(text, pin.start, pin.end)


def _leading_cut(text: str, pins: list[_Pin]) -> tuple[int, int]:
    """How many pins open the message, and where the text after them (and their separators) begins."""
    cursor = count = 0
    for pin in pins:
        if text[cursor : pin.start].strip(_PIN_SEPARATORS) or not _standalone(text, pin):
            break
        count += 1
        cursor = pin.end
    if count:
        cursor = _AFTER_LEADING_PINS.match(text, cursor).end()  # type: ignore[union-attr]
    return count, cursor


def _trailing_cut(text: str, pins: list[_Pin], leading: int) -> tuple[int, int]:
    """How many pins follow the end of the question, and where they begin (len(text) when none)."""
    cursor = len(text)
    count = 0
    for pin in reversed(pins[leading:]):
        if text[pin.end : cursor].strip(_PIN_SEPARATORS + ".!?") or not _standalone(text, pin):
            break
        count += 1
        cursor = pin.start
    ended = text[:cursor].rstrip()
    if count and (not ended or ended[-1] in ".!?" or "\n" in text[len(ended) : cursor]):
        return count, cursor
    return 0, len(text)


def _apply_pins(text: str, pins: list[_Pin]) -> str:
    """Pins opening or closing the message are cut; the others lose their `@`."""
    leading, start = _leading_cut(text, pins)
    trailing, end = _trailing_cut(text, pins, leading)
    parts: list[str] = []
    cursor = start
    for pin in pins[leading : len(pins) - trailing]:
        parts.append(text[cursor : pin.start])
        parts.append(pin.label)
        cursor = pin.end
    parts.append(text[cursor:end])
    return "".join(parts)


def _tidy(text: str) -> str:
    lines = [_INLINE_SPACE.sub(" ", line).strip() for line in text.split("\n")]
    return _OPENING_SEPARATORS.sub("", "\n".join(lines).strip()).strip()


def _note_in(text: str) -> tuple[bool, str | None]:
    """Whether the text is a note, and the knowledge it holds (None when the trigger stands alone)."""
    for match in _TRIGGER.finditer(text):
        before = text[: match.start()]
        lead = _LEAD_IN.search(before)
        head = before[: lead.start()] if lead else before
        after = text[match.end() :]
        rest = after.lstrip(_FOLLOWING_SEPARATORS).rstrip()
        stripped = head.rstrip()
        opens_sentence = not stripped or stripped[-1] in _SENTENCE_BREAK or head.endswith("\n")
        closes_message = not rest and stripped[-1:] in tuple(_TRAILING_BREAK)
        if not (opens_sentence or closes_message):
            continue
        if match.group("colon") is None and match.group("punct") is None and _is_question(after):
            continue
        if rest and match.group("this") and match.group("punct") is None:
            # "remember this table is unused": "this" belongs to the knowledge.
            return True, text[match.start("this") :].strip()
        if rest:
            return True, rest
        earlier = head.rstrip().rstrip(_TRAILING_BREAK.replace(".", "").replace("!", "").replace("?", "")).strip()
        return True, earlier or None
    return False, None


def _is_question(after: str) -> bool:
    """Does the sentence that follows a bare "remember this" end in a question mark?"""
    ends = [i for i in (after.find(c) for c in ".!?\n") if i >= 0]
    return bool(ends) and after[min(ends)] == "?"


def parse_message(
    text: str, *, labels: Mapping[str, str], bot_user_id: str | None, bot_name: str | None = None
) -> ParsedMessage:
    """The question without the bot mention, the databases it pins, and whether (and what) it asks to remember.

    `labels` maps every database name and alias, lower-case, to the database's canonical name."""
    pieces = _clean(text, bot_user_id, bot_name)
    joined, pins = _find_pins(pieces, labels)
    question = _tidy(_apply_pins(joined, pins))
    remember, note_text = _note_in(question)
    return ParsedMessage(
        text=question,
        pins=list(dict.fromkeys(p.database for p in pins)),
        remember=remember,
        note_text=note_text,
    )


#: The longest message taken as a question or note. Longer text costs model context and time without making a
#: question clearer; every surface refuses it with `too_long` instead of passing it on.
MAX_MESSAGE_CHARS = 8000


def too_long(text: str) -> str | None:
    """What to tell the user when the message is longer than a question or note may be, else None."""
    if len(text) <= MAX_MESSAGE_CHARS:
        return None
    return (
        f"That message is {len(text):,} characters long; I take questions and notes of up to "
        f"{MAX_MESSAGE_CHARS:,} characters. Ask the question on its own, and attach long text as a note in parts."
    )
