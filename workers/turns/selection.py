"""Which tables the guided path's SQL call sees (`workers.turns.guided`), chosen from one search's candidates.

- Copies the user did not ask about are left out (the copy rule of run_sql, applied before the model sees them).
- The database: the one of the best candidate (`workers.turns.database_choice`), unless the question names
  another by name. When the best candidates of two databases tie (scores within `TIE_RATIO`) on the same entity
  (the same table name, or one name's words among the other's), and the question names neither, the choice is the
  user's: `ambiguous`.
- The tables: the candidates of that database in rank order, with the join tables search found between them. Up to
  `DIRECT_TABLES` go to the SQL call as they are; more are narrowed by one constrained model call
  (`workers.turns.table_pick`) unless the leading candidates stand clearly ahead (`LEAD_RATIO`); those gain the best
  candidate of each part of the question none of them covers (`search.coverage`). Either way the best candidate
  holding a value the question names stays in: the filter on that value needs its table; and when that table
  explains codes (the value is a code's meaning, "cancelled"), so does the best candidate with a column coded by it.
  A selection that comes down to one table gains its neighbours by declared keys (`with_neighbours`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.cards.database_summary import summaries_for
from core.store.repositories import search_queries as queries
from core.text.identifiers import expand_words
from search.candidates import Candidate
from search.examples import ExampleHit
from search.service import SearchResult
from workers.tools.base import ToolContext, ToolInputError, queryable_source, viewer_card, visible_table
from workers.tools.copy_rule import mentions
from workers.turns.compact_schema import SchemaTable
from workers.turns.database_choice import databases_ranked
from workers.turns.value_linking import LinkedValue

#: This many candidates of the chosen database (or fewer) go to the SQL call without a choice by the model.
DIRECT_TABLES = 4
#: The most candidates the model chooses among (`workers.turns.table_pick`).
PICK_FROM = 4
#: Candidates scoring at least this share of the best are "leading"; when the leading ones (with the join tables
#: between them) are few and the next candidate is below the share, they are taken without a model call.
LEAD_RATIO = 0.9
LEADING_AT_MOST = 3
#: Whether the leading candidates gain the best candidate of each part of the question none of them covers
#: (`_covering`; `bench.table_selection` measures the selection with it and without).
COVER_PARTS = True
#: Signals by which search finds a table for the question itself (`search.candidates`), beside a join.
DIRECT_SIGNALS = frozenset({"keyword", "value", "note", "example"})
#: A selection of one table gains up to this many tables it has declared keys with (a question about owners
#: "who own no dogs" needs the dogs too, and search ranks only the table the question names).
NEIGHBOURS = 2
#: A table the best candidate refers to by a declared key, scoring at least this share of it, is shown first: the
#: header before its lines ("the total order amount" is the orders table's, not the sum of its lines).
HEADER_RATIO = 0.95
#: The best candidates of two databases within this share of each other tie.
TIE_RATIO = 0.97
#: Words with which a question asks for a log or history table rather than the live table it records.
HISTORY_WORDS = frozenset({"log", "history", "historical", "change", "changed", "audit", "trail", "event"})
#: Roles of tables that hold part of a live table's data or its history (`catalog.table_card.ROLE_PHRASES`).
PART_ROLES = frozenset({"partition", "log"})
#: Characters of a database summary in the question that asks which database the user means.
SUMMARY_CHARS = 120


@dataclass
class Selection:
    database: str = ""
    engine: str = ""
    tables: list[SchemaTable] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)  # of `database`, in rank order (to pick among)
    needs_pick: bool = False
    ambiguous: list[tuple[str, str]] = field(default_factory=list)  # (database, summary) the user chooses between
    denied: list[str] = field(default_factory=list)
    schema: str = ""
    examples: list[ExampleHit] = field(default_factory=list)  # approved examples on `database`, nearest first
    #: Values of `database` the question names, on every candidate of it (not only the chosen tables): where a
    #: filter on another column may have been meant (`workers.turns.answer_checks`).
    linked: list[LinkedValue] = field(default_factory=list)
    #: Copies search found that the question itself does not ask for, left out (`_live_or_asked`).
    copies_left_out: list[Candidate] = field(default_factory=list)


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def name_words(name: str) -> set[str]:
    words = {w.lower() for part in re.split(r"[^A-Za-z0-9]+", name) for w in _WORD.findall(part)}
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words}


def _same_entity(a: str, b: str) -> bool:
    left, right = name_words(a), name_words(b)
    return bool(left and right) and (left <= right or right <= left)


def _named(question: str, database: str) -> bool:
    said = {w.lower() for w in re.findall(r"[A-Za-z0-9_]+", question)}
    return database.lower() in said


def _live_or_asked(asked: str, candidate: Candidate) -> bool:
    """A live table, or a copy the question itself asks about: what the thread asked before does not carry a copy
    into a later question ("show me revenue" after a question about a snapshot)."""
    return candidate.copy_of is None or mentions([asked], candidate.table, candidate.role)


def says(said: set[str], word: str) -> bool:
    """`word` (of a table name) is among the question's words, or begins one of them ("ship" in "shipments")."""
    return word in said or (len(word) >= 4 and any(w.startswith(word) for w in said))


def _part_asked(question: str, candidate: Candidate, live_words: set[str]) -> bool:
    """Whether the question asks for this partition or log table itself: it names the table, a history word for a
    log, or a word of the table's name that no live candidate's name has and that is not its period (a partition
    `SALES_2023` for "sales in 2023", not for "orders in 2023"; a log `SHIP_HIST` for "shipments", while
    `ORD_CHG_LOG` is not asked for by "orders", which name `ORD_MST` too)."""
    said = name_words(question)
    if candidate.table.lower() in question.lower():
        return True
    if candidate.role == "log" and said & HISTORY_WORDS:
        return True
    own = {w for w in name_words(candidate.table) if not w.isdigit()} - live_words
    return any(says(said, w) for w in own)


def live_first(question: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    """`candidates` without the partitions and logs the question does not ask for, as long as a live table (or
    view) remains: those hold part of the data or its history, and a small model shown both takes the wrong one or
    joins them. Rank order is kept."""
    live_words = {w for c in candidates if c.role not in PART_ROLES for w in name_words(c.table)}
    kept = [c for c in candidates if c.role not in PART_ROLES or _part_asked(question, c, live_words)]
    return kept if any(c.role not in PART_ROLES for c in kept) else list(candidates)


def choose(
    context: ToolContext, question: str, result: SearchResult, prior: Selection | None = None, asked: str = ""
) -> Selection:
    """The selection for `question` (searched text: with a follow-up, the earlier question too) from `result`;
    `asked`: the turn's own question (copies must be asked for there); with `prior` (a re-search after an empty
    result) the earlier tables of the same database stay in, after the new ones."""
    candidates = [c for c in result.candidates if _live_or_asked(asked or question, c)]
    left_out = [c for c in result.candidates if c not in candidates]
    if not candidates:
        return Selection(denied=list(result.denied_tables), copies_left_out=left_out)
    by_database: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_database.setdefault(candidate.database, []).append(candidate)
    order = databases_ranked(candidates)
    named = [d for d in order if _named(question, d)]
    database = named[0] if len(named) == 1 else order[0]
    if prior is None and not context.pins and not named and len(order) > 1:
        first, second = by_database[order[0]][0], by_database[order[1]][0]
        if second.score >= TIE_RATIO * first.score and _same_entity(first.table, second.table):
            return Selection(ambiguous=_summaries(context, order[:2]), denied=list(result.denied_tables))
    chosen = live_first(question, by_database[database])
    source = queryable_source(context, database)
    tables = _schema_tables(context, source, chosen)
    selection = Selection(
        database=source.name, engine=source.engine, denied=list(result.denied_tables), copies_left_out=left_out
    )
    selection.examples = [e for e in result.examples if e.database == source.name]
    selection.linked = [
        LinkedValue(c.table, str(v["column"]), str(v["value"]), meaning, meaning)
        for c in by_database[database]
        for v in c.values
        if "value" in v  # not the name of a column's group of codes
        for meaning in [str(v.get("meaning") or "")]
    ]
    if prior is not None and prior.database == source.name:
        known = {t.name for t in tables}
        tables = [*tables[:DIRECT_TABLES], *[t for t in prior.tables if t.name not in known]][:DIRECT_TABLES]
        selection.tables = tables
        return selection
    tables = headers_first(tables, {c.table: c.score for c in chosen}, question)
    selection.candidates = [c for c in chosen if c.table in {t.name for t in tables}]
    tables = with_neighbours(context, source, tables)
    if len(tables) <= DIRECT_TABLES:
        selection.tables = tables
        return selection
    leading = leading_tables(selection.candidates, tables)
    if leading is not None:
        selection.tables = with_neighbours(context, source, [t for t in tables if t.name in leading])
        return selection
    offered = value_holder_kept(selection.candidates, PICK_FROM)
    selection.tables = [t for t in tables if t.name in {c.table for c in offered}]
    selection.candidates = offered
    selection.needs_pick = True
    return selection


def headers_first(tables: Sequence[SchemaTable], scores: dict[str, float], question: str = "") -> list[SchemaTable]:
    """`tables` with the one the first table refers to by a declared key moved before it, when that one scores
    within `HEADER_RATIO` of the first, or when the question names the entity both names share and no word only the
    first's name has ("the largest single order amount": orders, not order details): of a header and its lines,
    the header holds the question's subject and its totals, and a small model writes from the table shown first."""
    if len(tables) < 2:
        return list(tables)
    first = tables[0]
    targets = _referenced(first.card)
    top = scores.get(first.name, 0.0)
    for index, table in enumerate(tables[1:DIRECT_TABLES], start=1):
        if table.name.upper() not in targets:
            continue
        if scores.get(table.name, 0.0) >= HEADER_RATIO * top or _asks_for_header(question, first.name, table.name):
            return [table, *tables[:index], *tables[index + 1 :]]
    return list(tables)


def _asks_for_header(question: str, lines: str, header: str) -> bool:
    """The question names a word the two tables' names share and none that only the lines' name has."""
    said = name_words(question)
    own, shared = set(expand_words(lines)), set(expand_words(header))
    return any(says(said, w) for w in own & shared) and not any(says(said, w) for w in own - shared)


def joined_only(candidate: Candidate) -> bool:
    """Search found `candidate` only as a join between others, not by the question's words or values (its own
    semantic score is what any table gets). A table the question's words found and that also joins others is not."""
    return "join" in candidate.matched_by and not DIRECT_SIGNALS & set(candidate.matched_by)


def leading_tables(candidates: Sequence[Candidate], tables: Sequence[SchemaTable]) -> set[str] | None:
    """The leading candidates and the join tables between them (where those do not join each other directly), when
    they stand clearly ahead; else None."""
    best = candidates[0].score
    lead = [c for c in candidates if not joined_only(c) and c.score >= LEAD_RATIO * best]
    names = {c.table for c in lead}
    if len(names) > LEADING_AT_MOST:
        return None
    holder = _value_holder(candidates)
    if holder is not None and not any(c.values for c in lead):
        names.add(holder.table)
    names |= _coded_by(candidates, tables, [c for c in candidates if c.table in names and c.values])
    names |= _covering(candidates, names)
    cards = {t.name: t.card for t in tables}
    for c in candidates:
        if len(c.through) >= 2 and set(c.through) <= names and not _joined_directly(cards, c.through):
            names.add(c.table)
    return names


def _covering(candidates: Sequence[Candidate], names: set[str]) -> set[str]:
    """For each part of the question (`search.coverage`) that some candidate covers and none of `names` does, the
    best candidate covering it: "which product categories had the most returns" leads with the products and the
    code table of their categories, and the count is of the returns, a part only a lower candidate covers."""
    if not COVER_PARTS:
        return set()
    covered = {part for c in candidates if c.table in names for part in c.covers}
    found: set[str] = set()
    for candidate in candidates:
        if joined_only(candidate) or candidate.table in names:
            continue
        if set(candidate.covers) - covered:
            found.add(candidate.table)
            covered |= set(candidate.covers)
    return found


def _value_holder(candidates: Sequence[Candidate]) -> Candidate | None:
    """The best candidate holding a value the question names ("Busan" in a city column): the table a filter on
    that value needs, whatever its rank among tables whose names match the question's other words."""
    return next((c for c in candidates if c.values and not joined_only(c)), None)


def _coded_by(
    candidates: Sequence[Candidate], tables: Sequence[SchemaTable], code_tables: Sequence[Candidate]
) -> set[str]:
    """For each of `code_tables` (tables holding a value the question names), the best candidate with a column that
    takes its codes from it: "cancelled orders" names a meaning in the code table, and the count is of the orders
    whose status code means it, so the orders table must be offered beside the code table."""
    cards = {t.name: t.card for t in tables}
    found: set[str] = set()
    for code_table in code_tables:
        wanted = code_table.table.upper()
        for candidate in candidates:
            if candidate.table == code_table.table or joined_only(candidate):
                continue
            if any(
                wanted in _code_sources(column) for column in (cards.get(candidate.table) or {}).get("columns") or []
            ):
                found.add(candidate.table)
                break
    return found


def _code_sources(column: dict[str, Any]) -> set[str]:
    """The tables a column's codes are explained in (`codes_from`: [schema, table] pairs), unqualified, upper case."""
    return {str(pair[-1]).upper() for pair in column.get("codes_from") or [] if pair}


def value_holder_kept(candidates: Sequence[Candidate], at_most: int) -> list[Candidate]:
    """The first `at_most` candidates, the value holder among them (in place of the last) when it ranks lower."""
    first = list(candidates[:at_most])
    holder = _value_holder(candidates)
    if holder is None or holder in first or not first or any(c.values for c in first):
        return first
    return [*first[:-1], holder]


def _referenced(card: dict[str, Any]) -> set[str]:
    """The tables a card's table refers to by declared keys, unqualified, in upper case."""
    names = {str(fk.get("references", "")).rpartition(".")[2] for fk in card.get("foreign_keys") or []}
    return {n.upper() for n in names if n}


def _key_targets(card: dict[str, Any]) -> set[str]:
    """The tables a card's table has declared keys with, either way, unqualified, in upper case."""
    referring = {str(name).rpartition(".")[2].upper() for name in card.get("referenced_by") or []}
    return _referenced(card) | {n for n in referring if n}


def _joined_directly(cards: dict[str, dict[str, Any]], names: Sequence[str]) -> bool:
    """Every two of `names` have a declared key between them: a table joining them adds nothing."""
    targets = {name: _key_targets(cards.get(name) or {}) for name in names}
    return all(b.upper() in targets[a] or a.upper() in targets[b] for i, a in enumerate(names) for b in names[i + 1 :])


def with_neighbours(context: ToolContext, source: Any, tables: list[SchemaTable]) -> list[SchemaTable]:
    """`tables`, and when that is one table, the tables it has declared keys with: however the selection came down
    to one table (the only candidate, the one leading candidate, or the model's choice), a question about it may
    need a table it refers to or that refers to it ("owners who own no dogs")."""
    if len(tables) != 1:
        return tables
    return [*tables, *_neighbours(context, source, tables[0])]


def _neighbours(context: ToolContext, source: Any, table: SchemaTable) -> list[SchemaTable]:
    """Tables `table` refers to, or that refer to it, by declared keys, that the user may see."""
    names = [str(fk.get("references", "")) for fk in table.card.get("foreign_keys") or []]
    names += [str(name) for name in table.card.get("referenced_by") or []]
    found: list[SchemaTable] = []
    for name in dict.fromkeys(n for n in names if n):
        if len(found) >= NEIGHBOURS:
            break
        try:
            row = visible_table(context, source, name)
        except ToolInputError:
            continue
        if row.name.upper() == table.name.upper() or row.copy_of_id is not None:
            continue
        found.append(SchemaTable(row.name, row.schema_name or None, viewer_card(context, source, row)))
    return found


def _schema_tables(context: ToolContext, source: Any, candidates: Sequence[Candidate]) -> list[SchemaTable]:
    tables = []
    for candidate in candidates:
        name = f"{candidate.schema}.{candidate.table}" if candidate.schema else candidate.table
        try:
            row = visible_table(context, source, name)
        except ToolInputError:
            continue  # not visible to this user after all: never shown
        card = viewer_card(context, source, row)
        tables.append(SchemaTable(row.name, row.schema_name or None, card, list(candidate.values)))
    return tables


def _summaries(context: ToolContext, names: Sequence[str]) -> list[tuple[str, str]]:
    summaries = summaries_for(context.session, context.principal, queries.sources(context.session))
    shown = []
    for name in names:
        summary = " ".join(summaries.get(name, "").split())
        if len(summary) > SUMMARY_CHARS:
            summary = summary[: SUMMARY_CHARS - 1] + "…"
        shown.append((name, summary))
    return shown
