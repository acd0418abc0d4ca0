"""Checks of a statement and its result against the question, before the answer goes out (SPEC §4, guided path).

A small model's statement can run fine and still answer another question. Each check reads only the question, the
statement, its result and the cards of the tables it reads, so it holds for any database:
- **shape**: a breakdown the question asks for ("by month", "per region", "for each", "월별") must be in the
  result (a GROUP BY, or more than one row); "top 5" / "which five …" returns at most five rows and is not cut to one;
- **code**: a filter on a code column must use a code whose meaning the question names (or the code itself); when
  the question names another code of that column, the literal is rewritten to it;
- **value**: an identifier the question did not write (`CUST_ID = 'C000551'`) is a filter it never asked for; a
  text literal the question did not write, or one that matched no rows, must be a value the column holds (probed
  through the permission-checked SQL service); one the column holds in another spelling, case or script (`부산` →
  `Busan`) is rewritten to it (`workers.turns.value_linking.held_match`);
- **date**: a date column compared with one day when the question names no day ("the December 2023 snapshot"),
  and a date function on a column that holds no dates (`workers.turns.date_use`); where that column holds periods
  written as digits (`202401`), the statement reading their parts instead is offered (`Verdict.redated`);
- **copy**: a copy (backup, snapshot, staging, draft) read without the question itself asking for it, whatever the
  thread said before;
- **join**: a join condition that compares a column with itself, or one that matches part of a key both tables
  hold (`workers.turns.join_checks`).
A rewrite is applied without a model call; a doubt goes to one repair call as a hint, and when it remains, to the
user as one plain line (`Doubt.say`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from search.query_text import stem
from workers.tools.base import SqlRecord
from workers.tools.copy_rule import mentions
from workers.turns.code_meanings import base_forms, meaning_words, meant_codes, named_share, words
from workers.turns.date_use import DAY_LITERAL, Redated, Resolve, day_problems, redated, undated_problems
from workers.turns.join_checks import join_problems
from workers.turns.question_shape import shape_problems, ungrouped
from workers.turns.statement_filters import Filter, Unfiltered, card_column, filters, table_of, unfiltered
from workers.turns.value_linking import LinkedValue, has_hangul, held_match

#: Roles of tables that copy a live table (`catalog.copy_detection`): stale or partial rows.
COPY_ROLES = frozenset({"backup", "snapshot", "staging", "draft"})
#: An identifier written as a literal (`C000551`, `ORD-2024-0001`): a letter and three digits or more. A small model
#: copies one from the example rows into a filter the question never asked for.
_ID_LIKE = re.compile(r"^(?=.*[A-Za-z])(?=(?:.*\d){3})[A-Za-z0-9_-]{4,}$")
_TOKEN = re.compile(r"[0-9A-Za-z\u00C0-\uFFFF]+")


@dataclass(frozen=True)
class Doubt:
    """Why the answer may not answer the question: `say` for the user (one line), `hint` for the repair call, and
    `table`: a table of the database the repair needs in its schema (the live table of a copy, the table holding
    the value the question named)."""

    kind: str  # "shape", "code", "value", "date", "copy", "join"
    say: str
    hint: str
    table: str = ""
    #: The filter and literal the doubt is about, when leaving that literal out is the whole answer to it (a code
    #: or an identifier the question does not name, and no value it names instead): `Verdict.unfiltered`.
    drop: tuple[Filter, str] | None = None
    #: (the identifier the question names, the one the statement filtered on instead): the answer's sentence says
    #: the statement's, so it does not give one identifier's rows as the other's.
    read_as: tuple[str, str] | None = None


@dataclass(frozen=True)
class Rewrite:
    """A literal of the statement replaced by the value the column holds (`column`: TABLE.COLUMN)."""

    literal: str
    value: str
    column: str

    @property
    def note(self) -> str:
        return f"I read '{self.literal}' as '{self.value}', as {self.column} writes it."


@dataclass
class Verdict:
    doubts: list[Doubt] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    #: The statement without the grouping a one-figure question did not ask for (`question_shape.ungrouped`).
    ungrouped: str | None = None
    #: The statement with its date functions on periods written as digits rewritten (`workers.turns.date_use`).
    redated: Redated | None = None
    #: The statement without the filters whose every literal a doubt would leave out (`Doubt.drop`).
    unfiltered: Unfiltered | None = None


#: (table, column, literals) → the literals the column holds, or None when unknown; (table, column) → some values.
HeldProbe = Callable[[str, str, Sequence[str]], set[str] | None]
SampleProbe = Callable[[str, str], list[str] | None]


@dataclass(frozen=True)
class Probes:
    held: HeldProbe
    sample: SampleProbe


def parse(sql: str, dialect: str | None) -> exp.Expr | None:
    try:
        return parse_one(sql, read=dialect)
    except (SqlglotError, ValueError, RecursionError):
        return None


def tables_read(sql: str, dialect: str | None) -> list[str]:
    """The tables a statement reads, as written (CTE names left out)."""
    tree = parse(sql, dialect)
    if tree is None:
        return []
    ctes = {c.alias_or_name.upper() for c in tree.find_all(exp.CTE)}
    return list(dict.fromkeys(t.name for t in tree.find_all(exp.Table) if t.name.upper() not in ctes))


def check(
    question: str,
    record: SqlRecord,
    dialect: str | None,
    cards: dict[str, dict[str, Any]],
    linked: Sequence[LinkedValue],
    probes: Probes,
) -> Verdict:
    """Every check of `record` (a statement that ran) against `question`; `cards`: the cards of the tables the
    statement could read, by upper-case name; `linked`: values of the database the question names."""
    tree = parse(record.sql, dialect)
    verdict = Verdict()
    if tree is None:
        return verdict
    verdict.doubts += [Doubt("shape", say, hint) for say, hint in shape_problems(question, tree, record)]
    verdict.ungrouped = ungrouped(question, tree, record, dialect)
    verdict.doubts += copy_doubts(question, tree, cards)
    verdict.doubts += [Doubt("join", say, hint) for say, hint in join_problems(tree, cards)]
    found = filters(tree, cards)
    code_verdict = code_doubts(question, found, cards, linked)
    verdict.doubts += code_verdict.doubts
    verdict.rewrites += code_verdict.rewrites
    coded = {(f.table, f.column) for f in found if _codes(cards, f)}
    plain = [f for f in found if (f.table, f.column) not in coded]
    value_verdict = value_doubts(question, plain, record, cards, probes)
    verdict.doubts += value_verdict.doubts
    verdict.rewrites += value_verdict.rewrites
    verdict.doubts += [Doubt("date", say, hint) for say, hint in day_problems(question, found)]
    undated = undated_problems(tree, _resolver(tree, cards), probes.sample)
    verdict.doubts += [Doubt("date", say, hint) for say, hint in undated]
    if undated:
        verdict.redated = redated(tree.copy(), _resolver(tree, cards), probes.sample, dialect)
    drops = [d.drop for d in verdict.doubts if d.drop is not None]
    if drops:
        verdict.unfiltered = unfiltered(tree, drops, dialect)  # last: it changes `tree`
    return verdict


# --- copies ------------------------------------------------------------------------------------------------------


def copy_doubts(question: str, tree: exp.Expr, cards: dict[str, dict[str, Any]]) -> list[Doubt]:
    doubts = []
    for table in {t.name.upper(): t.name for t in tree.find_all(exp.Table)}.values():
        card = cards.get(table.upper()) or {}
        role = str(card.get("role") or "")
        if role not in COPY_ROLES or not card.get("copy_of") or mentions([question], table, role):
            continue
        live = str(card["copy_of"])
        doubts.append(
            Doubt(
                "copy",
                f"I read {table}, a {role} copy of {live}, though the question does not ask about that copy; its "
                "rows may be stale.",
                f"{table} is a {role} copy of {live}: read {live}, the live table, instead.",
                live,
            )
        )
    return doubts


# --- codes ---------------------------------------------------------------------------------------------------------


def _column(cards: dict[str, dict[str, Any]], f: Filter) -> dict[str, Any]:
    for column in cards[f.table].get("columns", []):
        if isinstance(column, dict) and column.get("name") == f.column:
            return column
    return {}


def _codes(cards: dict[str, dict[str, Any]], f: Filter) -> list[dict[str, Any]]:
    """The codes of the filter's column with their meanings; [] when the card knows no meanings for most of them
    (then its literals are checked as values)."""
    return meant_codes(_column(cards, f))


def code_doubts(
    question: str, found: Sequence[Filter], cards: dict[str, dict[str, Any]], linked: Sequence[LinkedValue]
) -> Verdict:
    verdict = Verdict()
    if _mostly_other_script(question):
        return verdict  # meanings are written in the data's language: no fair comparison with the question's words
    said = words(question)
    for f in found:
        codes = _codes(cards, f)
        if not codes or f.op == "like":
            continue
        meanings = {str(c["code"]): str(c.get("meaning") or "") for c in codes}
        scores = {code: named_share(meaning, said) for code, meaning in meanings.items()}
        best = max(scores.values(), default=0.0)
        for literal in f.literals:
            if literal in meanings and literal.lower() in said and len(literal) >= 2:
                continue  # the question names the code itself
            share = scores.get(literal, 0.0)
            if share > 0 and share >= best:
                verdict.doubts += _used_twice(question, f, literal, meanings[literal], found)
                continue
            winners = [code for code, s in scores.items() if s == best and best > 0]
            if len(winners) == 1 and winners[0] not in f.literals:
                verdict.rewrites.append(Rewrite(literal, winners[0], f"{f.table}.{f.column}"))
                continue
            if not meanings.get(literal) and literal not in meanings and winners:
                continue  # several named codes and the literal none of them: left to the value check
            verdict.doubts.append(_code_doubt(question, f, literal, meanings.get(literal, ""), linked, best == 0))
    return verdict


def _name_words(column: str) -> set[str]:
    return {w.lower() for w in re.split(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])", column) if len(w) >= 3}


def _answers_for(word: str, column_words: set[str]) -> bool:
    return any(word.startswith(w) or (len(word) >= 3 and w.startswith(word)) for w in column_words)


def _used_twice(question: str, f: Filter, code: str, meaning: str, found: Sequence[Filter]) -> list[Doubt]:
    """A doubt when the only words of the question that name this code's meaning are words another filtered
    column's name already answers for ("shipped to Busan": the ship-to city, not also the status Shipped; "paid by
    credit card": the payment method, not also the status Paid). A word answers for a column when it, or its
    dictionary form, begins with a word of the column's name, or is the beginning of one ("pay" of PAYMENT)."""
    asked = {stem(t.lower()) for t in _TOKEN.findall(question)}
    meant = meaning_words(meaning)
    naming = {q for q in asked if any(q == w or (len(w) >= 4 and q.startswith(w[:4])) for w in meant)}
    for other in found:
        if (other.table, other.column) == (f.table, f.column):
            continue
        named = _name_words(other.column)
        covered = {q for q in naming if any(_answers_for(form, named) for form in base_forms(q))}
        if naming and covered == naming:
            word = sorted(naming)[0]
            return [
                Doubt(
                    "code",
                    f"I read '{word}' both as {other.column} and as {f.column} = '{code}' ({meaning}); say if you "
                    "did not mean the second.",
                    f"The question's '{word}' is already answered by the filter on {other.column}: leave out "
                    f"{f.column} = '{code}' unless the question asks for it.",
                    drop=(f, code),
                )
            ]
    return []


def _code_doubt(
    question: str, f: Filter, literal: str, meaning: str, linked: Sequence[LinkedValue], alone: bool
) -> Doubt:
    """The doubt on a code the question does not name; `alone`: the question names no code of the column either."""
    meant = f" ({meaning})" if meaning else ""
    elsewhere = [v for v in linked if (v.table.upper(), v.column) != (f.table.upper(), f.column)]
    elsewhere.sort(key=lambda v: v.value not in question)  # the spelling the question wrote first
    say = f"I filtered on {f.column} = '{literal}'{meant}, which the question does not name"
    hint = f"{f.table}.{f.column} = '{literal}' means {meaning or 'a code'}, which the question does not ask for."
    table = ""
    if elsewhere:
        value = elsewhere[0]
        shown = value.said or value.value
        say += f"; say if you meant '{shown}' as {value.table}.{value.column}"
        hint += f" The question's '{shown}' is the value '{value.value}' of {value.table}.{value.column}: filter on it."
        table = value.table
    return Doubt("code", say + ".", hint, table, (f, literal) if alone and not elsewhere else None)


def _mostly_other_script(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isascii() for c in letters) < len(letters) / 2


# --- values and dates --------------------------------------------------------------------------------------------


def value_doubts(
    question: str, found: Sequence[Filter], record: SqlRecord, cards: dict[str, dict[str, Any]], probes: Probes
) -> Verdict:
    verdict = Verdict()
    asked = " ".join(question.casefold().split())
    empty = not record.rows or all(v in (None, 0) for row in record.rows[:1] for v in row)
    written = {lit.casefold() for f in found for lit in f.literals}
    # an identifier the question names that no filter uses: the statement's own identifier stands for it, written
    # wrong ("PE0001" for "P0001"), and leaving that filter out would answer for every row instead
    meant = [t for t in _TOKEN.findall(question) if _ID_LIKE.match(t) and t.casefold() not in written]
    for f in found:
        for literal in [
            lit for lit in f.literals if f.op != "like" and _ID_LIKE.match(lit) and lit.casefold() not in asked
        ]:
            if meant:
                say = (
                    f"I filtered on {f.column} = '{literal}', which the question does not name; it names '{meant[0]}'."
                )
                hint = f"The question names '{meant[0]}', not '{literal}': filter {f.column} on '{meant[0]}'."
                verdict.doubts.append(Doubt("value", say, hint, read_as=(meant[0], literal)))
                continue
            verdict.doubts.append(
                Doubt(
                    "value",
                    f"I filtered on {f.column} = '{literal}', which the question does not name.",
                    f"The question names no {f.column} '{literal}': leave that filter out.",
                    drop=(f, literal),
                )
            )
        literals = [lit for lit in f.literals if lit.strip() and not DAY_LITERAL.match(lit)]
        if f.op == "like":
            literals = [lit.strip("%_ ") for lit in literals if has_hangul(lit) or empty]
            literals = [lit for lit in literals if lit and not _held_like(lit, cards, f, probes)]
        else:
            unsure = [lit for lit in literals if empty or lit.casefold() not in asked]
            held = probes.held(f.table, f.column, unsure) if unsure else set()
            literals = [] if held is None else [lit for lit in unsure if lit not in held]
        for literal in literals:
            values = [str(v) for v in _column(cards, f).get("values") or []]
            value = held_match(literal, values) or held_match(literal, probes.sample(f.table, f.column) or [])
            if value is not None and value != literal:
                verdict.rewrites.append(Rewrite(literal, value, f"{f.table}.{f.column}"))
                continue
            some = ", ".join(f"'{v}'" for v in values[:6])
            verdict.doubts.append(
                Doubt(
                    "value",
                    f"No {f.column} of {f.table} is '{literal}', so the filter on it may be on the wrong column.",
                    f"{f.table}.{f.column} holds no '{literal}'"
                    + (f" (it holds values such as {some})" if some else "")
                    + ": filter on the column that holds the question's value, written as the data writes it.",
                )
            )
    return verdict


def _held_like(pattern: str, cards: dict[str, dict[str, Any]], f: Filter, probes: Probes) -> bool:
    values = [str(v) for v in _column(cards, f).get("values") or []] or probes.sample(f.table, f.column) or []
    return any(pattern.casefold() in v.casefold() for v in values)


def _resolver(tree: exp.Expr, cards: dict[str, dict[str, Any]]) -> Resolve:
    aliases = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table)}

    def resolve(column: exp.Column) -> tuple[str, dict[str, Any]] | None:
        table = table_of(column, aliases, cards)
        return None if table is None else (table, card_column(cards[table], column.name))

    return resolve
