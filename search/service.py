"""Table search (SPEC §3): select databases, retrieve by meaning, words and notes, fuse, rerank, filter.

One Python API used in-process by the workers and the command line. The principal comes from the caller's
trusted context; it decides which databases are searched, which tables are returned and which are only named
in `denied_tables`. Copies are never removed, only placed directly behind their live table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.access.users import UserRef
from core.access.viewer_facts import ViewerReads
from core.cards.card_view import card_for_principal
from core.errors import NotFoundError, TablescoutError
from core.store.models import SourceTable
from core.store.repositories import search_queries as queries
from search import families
from search.candidates import Candidate, build_candidate, card_head
from search.coverage import PartRanking, cover, depth
from search.database_selection import SourceChoice, select_databases
from search.decomposition import Part, decompose, phrases
from search.encoders import Embedder, Reranker
from search.examples import ExampleHit, examples_for
from search.fusion import best_first, reciprocal_rank_fusion
from search.join_expansion import expand
from search.limits import MAX_K as MAX_K
from search.masked_hits import MaskedHits
from search.multilingual import other_script
from search.notes import readable_notes, seen_in_full
from search.ordering import is_copy, place_copies, question_words, take_slots
from search.query_text import tsquery
from search.values import ValueMatch, value_matches, visible_matches

DEFAULT_K = 8
#: A term of digits and date punctuation only ("2024", "2024-03") is a filter value, not a name of anything: as a
#: ranking of its own it would put every table with a year in its name (partitions, dated snapshots) ahead of the
#: table the question is about. The question's own ranking still weighs it once.
_FILTER_VALUE = re.compile(r"^[\d\s./:-]+$")
RETRIEVE = 60
RERANK_DEPTH = 20
NOTE_SIMILARITY = 0.5
#: The weight of each phrase's rankings in the fusion (the whole question's weigh 1). Chosen by leaving one set out:
#: with any one set left out the other three choose 0.25 over 0.5 and 1.0 (`bench/results/retrieval.md`).
PART_WEIGHT = 0.25
#: The weight of the value ranking (tables holding values the question names) in the fusion.
VALUE_WEIGHT = 1.0
EXAMPLES = 3  # approved examples whose tables form one more ranking
#: The most candidates an adaptive search adds beyond k for the question's parts and connectors.
ADAPTIVE_EXTRA = 4
ALL_SIGNALS = frozenset({"semantic", "keyword", "note"})


class SearchInputError(TablescoutError):
    """The search request itself is wrong (empty question, k out of range, unknown database)."""


@dataclass
class SearchRequest:
    question: str
    databases: Sequence[str] = ()
    terms: Sequence[str] = ()
    k: int = DEFAULT_K
    signals: frozenset[str] = ALL_SIGNALS
    select_databases: bool = True
    rerank: bool = True
    expand_joins: bool = True
    values: bool = True
    decompose: bool = True
    bm25: bool = True  # the keyword ranking: each table's best chunk by BM25 (False: by ts_rank_cd)
    families: bool = True  # one place for a table and its near-twins (`search.families`)
    coverage: bool = True  # a candidate for each part of the question first (`search.coverage`)
    #: Hand over more than k candidates, up to k + ADAPTIVE_EXTRA, when the question's parts and the connectors
    #: between its candidates need them (a turn's search; the command line's `-k` stays exact).
    adaptive: bool = False


@dataclass
class Searched:
    databases: list[str]
    total: int

    def describe(self) -> str:
        return f"searched {len(self.databases)} of {self.total} databases"


@dataclass
class SearchResult:
    searched: Searched
    candidates: list[Candidate] = field(default_factory=list)
    denied_tables: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)  # what the question mentions (`search.decomposition`)
    examples: list[ExampleHit] = field(default_factory=list)  # approved examples near the question, nearest first


@dataclass
class Encoders:
    embedder: Embedder
    reranker: Reranker
    #: The second vector space's encoder (search.multilingual): questions in another script are searched by it.
    multilingual: Embedder | None = None


def _validate(request: SearchRequest) -> None:
    if not request.question or not request.question.strip():
        raise SearchInputError("the question is empty")
    if not 1 <= request.k <= MAX_K:
        raise SearchInputError(f"k must be between 1 and {MAX_K}, not {request.k}")
    unknown = request.signals - ALL_SIGNALS
    if unknown or not request.signals:
        raise SearchInputError(f"signals must be among {', '.join(sorted(ALL_SIGNALS))}")


def _choices(session: Session, principal: Principal, pins: Sequence[str]) -> tuple[list[SourceChoice], int, bool]:
    registered = queries.sources(session)
    allowed = [s for s in registered if principal.may_see(s.name)]
    to_choice = {
        s.name: SourceChoice(
            s.id, s.name, s.summary, list(s.summary_embedding) if s.summary_embedding is not None else None
        )
        for s in allowed
    }
    if not pins:
        return list(to_choice.values()), len(allowed), False
    chosen = []
    everything = {s.name.lower(): s for s in registered}
    for pin in pins:
        match = everything.get(pin.lower()) or next(
            (s for s in everything.values() if pin.lower() in (a.lower() for a in s.aliases)), None
        )
        if match is None:
            raise SearchInputError(f"there is no database named {pin!r}")
        if match.name not in to_choice:
            raise SearchInputError(f"you may not query database {match.name!r}")
        if to_choice[match.name] not in chosen:
            chosen.append(to_choice[match.name])
    return chosen, len(allowed), True


def _rankings(
    session: Session,
    texts: Sequence[str],
    weights: Sequence[float],
    source_ids: list[int],
    signals: frozenset[str],
    vectors: np.ndarray,
    first_hits: list[queries.Hit] | None,
    common: set[str],
    masked: MaskedHits,
    phrases_from: int,
    bm25: bool,
    multilingual: bool = False,
) -> tuple[list[tuple[list[int], float]], dict[int, set[str]], list[PartRanking]]:
    """Per-table rankings by meaning and by words for the question, each extra term and each phrase of the
    question, weighted by `weights`; hits on tables with columns masked for the reader are scored on what the
    reader sees (`search.masked_hits`). Texts from `phrases_from` on are the question's phrases: searched by words
    over the whole index, by meaning only among the tables the other rankings found (a phrase's meaning orders
    what the question found; searching the whole index for it costs a vector search each). Also each phrase's own
    rankings, for coverage (`search.coverage`). `vectors` are of the multilingual space when `multilingual`."""
    rankings: list[tuple[list[int], float]] = []
    own: dict[int, tuple[list[int], list[int]]] = {}
    matched: dict[int, set[str]] = {}
    keyword_found: dict[int, tuple[str, list[queries.Hit]]] = {}
    semantic_found: dict[int, list[queries.Hit]] = {}
    words_only: dict[int, str] = {}  # texts searched by words alone: all in one statement below
    for index, text in enumerate(texts):
        reuse = index == 0 and first_hits is not None
        whole = "semantic" in signals and index < phrases_from and not reuse
        query = tsquery(text, common, fallback=index == 0) if "keyword" in signals else None
        semantic_found[index] = first_hits if reuse and first_hits is not None else []
        if not whole:
            if query:
                words_only[index] = query
            continue
        # both rankings of one text in one statement (the question's meaning ranking was read already)
        semantic, keyword = queries.hybrid_hits(
            session, vectors[index].tolist(), query, source_ids, RETRIEVE, bm25, multilingual
        )
        semantic_found[index] = semantic
        if query:
            keyword_found[index] = (query, keyword)
    found_by_words = queries.keyword_hits_of(session, list(words_only.values()), source_ids, RETRIEVE, bm25)
    for (index, query), keyword in zip(words_only.items(), found_by_words, strict=True):
        keyword_found[index] = (query, keyword)
    if "semantic" in signals and len(texts) > phrases_from:
        found = {h.table_id for hits in semantic_found.values() for h in hits}
        found |= {h.table_id for _, hits in keyword_found.values() for h in hits}
        among = queries.semantic_among(
            session, [v.tolist() for v in vectors[phrases_from:]], sorted(found), multilingual
        )
        for offset, hits in enumerate(among):
            semantic_found[phrases_from + offset] = hits[:RETRIEVE]
    for index, weight in enumerate(weights):
        by_meaning: list[int] = []
        by_words: list[int] = []
        if "semantic" in signals:
            hits = masked.semantic(semantic_found[index], vectors[index])
            by_meaning = best_first((h.table_id, h.score) for h in hits)
            rankings.append((by_meaning, weight))
            for table_id in by_meaning[:RETRIEVE]:
                matched.setdefault(table_id, set()).add("semantic")
        if index in keyword_found:
            query, keyword = keyword_found[index]
            words_hits = masked.keyword(keyword, query, bm25)
            by_words = best_first((h.table_id, h.score) for h in words_hits)
            rankings.append((by_words, weight))
            for table_id in by_words:
                matched.setdefault(table_id, set()).add("keyword")
        own[index] = (by_meaning, by_words)
    parts = [PartRanking(texts[i], *own[i]) for i in range(phrases_from, len(texts))]
    return rankings, matched, parts


def search_tables(
    session: Session,
    principal: Principal,
    request: SearchRequest,
    encoders: Encoders,
    viewer: UserRef | None,
    reads: ViewerReads | None = None,
) -> SearchResult:
    """The k best candidate tables for the question that `principal` may see, and the denied ones by name.
    `reads` counts what the principal's own SQL reads where their row filters or masks make a table's rows differ
    (value matches there, the candidates' row counts and codes); without it those are left out."""
    _validate(request)
    choices, total, pinned = _choices(session, principal, request.databases)
    parts = decompose(request.question) if request.decompose else []
    terms = [t for t in request.terms if t.strip() and not _FILTER_VALUE.match(t)]
    extra = [p for p in phrases(parts) if p.lower() not in {t.lower() for t in terms}]
    texts = [request.question, *terms, *extra]
    weights = [1.0] * (1 + len(terms)) + [PART_WEIGHT] * len(extra)
    # The question's script chooses the chunks' vector space (search.multilingual); notes, examples and the choice
    # of database are compared with MiniLM's vector of the question (`english`) whichever space the chunks use.
    multilingual = (
        encoders.multilingual is not None
        and other_script(request.question)
        and queries.has_multilingual(session, [c.source_id for c in choices])
    )
    space = encoders.multilingual if multilingual and encoders.multilingual is not None else encoders.embedder
    vectors = space.embed(texts)
    english = encoders.embedder.embed([request.question])[0] if multilingual else vectors[0]
    first_hits: list[queries.Hit] | None = None
    if choices and "semantic" in request.signals:
        first_hits = queries.semantic_hits(
            session, vectors[0].tolist(), [c.source_id for c in choices], RETRIEVE, multilingual
        )
    if not pinned and request.select_databases:
        best: dict[int, float] = {}
        for hit in first_hits or []:
            best[hit.source_id] = max(best.get(hit.source_id, -1.0), hit.score)
        choices = select_databases(english, request.question, choices, best)
    searched = Searched([c.name for c in choices], total)
    if not choices:
        return SearchResult(searched)
    source_ids = [c.source_id for c in choices]
    if first_hits is not None:
        first_hits = [h for h in first_hits if h.source_id in source_ids]
    common = queries.common_words(session)
    names = {c.source_id: c.name for c in choices}
    masked = MaskedHits(session, principal, names, space)
    rankings, matched, part_rankings = _rankings(
        session,
        texts,
        weights,
        source_ids,
        request.signals,
        vectors,
        first_hits,
        common,
        masked,
        1 + len(terms),
        request.bm25,
        multilingual,
    )
    note_texts: dict[int, list[str]] = {}
    if "note" in request.signals:
        note_hits = queries.note_hits(
            session,
            tsquery(request.question, common),
            english.tolist(),
            source_ids,
            viewer,
            RETRIEVE,
            NOTE_SIMILARITY,
        )
        seen = seen_in_full(session, principal, [h.note_id for h in note_hits])
        note_hits = [h for h in note_hits if h.note_id in seen]  # a note on a hidden table is not a signal either
        rankings.append((best_first((h.table_id, h.score) for h in note_hits), 1.0))
        for note_hit in note_hits:
            matched.setdefault(note_hit.table_id, set()).add("note")
            if note_hit.text not in note_texts.setdefault(note_hit.table_id, []):
                note_texts[note_hit.table_id].append(note_hit.text)
    # Tables that approved examples of similar questions read (only examples the principal may see in full).
    example_hits = examples_for(session, principal, english.tolist(), [c.name for c in choices], limit=EXAMPLES)
    if example_hits:
        example_ranking = best_first((t, h.similarity) for h in example_hits for t in h.table_ids)
        rankings.append((example_ranking, 1.0))
        for table_id in example_ranking:
            matched.setdefault(table_id, set()).add("example")
    values: dict[int, list[ValueMatch]] = {}
    if request.values:
        found = value_matches(session, request.question, source_ids)
        values = visible_matches(principal, found, queries.tables(session, list(found), with_cards=False), names, reads)
        value_ranking = sorted(values, key=lambda t: (-max(len(m.value) for m in values[t]), -len(values[t]), t))
        rankings.append((value_ranking, VALUE_WEIGHT))
        for table_id in value_ranking:
            matched.setdefault(table_id, set()).add("value")
    fused = reciprocal_rank_fusion(rankings)
    order = sorted(fused, key=lambda t: (-fused[t], t))
    rows = queries.tables(session, order, with_cards=False)  # cards are read for the shown tables only
    allowed_order: list[int] = []
    denied: list[str] = []
    shown_at_most = min(MAX_K, request.k + ADAPTIVE_EXTRA) if request.adaptive else request.k
    for table_id in order:
        row = rows[table_id]
        source = names[row.source_id]
        if principal.may_see_table(source, row):
            allowed_order.append(table_id)
        elif len(allowed_order) < shown_at_most:  # a denied table named where it would have been shown
            denied.append(f"{source}.{row.name}")
    scores = dict(fused)
    cards = _ViewerCards(principal, rows, names, reads)
    if request.rerank and note_texts and any(t in note_texts for t in allowed_order[:RERANK_DEPTH]):
        queries.load_cards(session, rows, allowed_order[:RERANK_DEPTH])
        allowed_order, scores = _rerank(encoders.reranker, request.question, allowed_order, cards, note_texts, scores)
    deferred: set[int] = set()
    if request.families:
        window = allowed_order[: families.WINDOW]
        otherwise = masked.sees_otherwise(window)
        grouped = families.group(
            allowed_order,
            rows,
            queries.column_names(session, window),
            question_words(request.question),
            lambda t: t not in otherwise and not is_copy(rows[t]),
        )
        allowed_order, deferred = grouped.order, set(grouped.family_of)
    covers: dict[int, list[str]] = {}
    firsts: list[int] = []
    if request.coverage:
        covered = cover(allowed_order, part_rankings, deferred)
        allowed_order, covers, firsts = covered.order, covered.covers, covered.firsts
    through: dict[int, list[int]] = {}
    if request.expand_joins:
        expansion = expand(session, principal, allowed_order, rows, names, is_copy, request.question)
        allowed_order, through = expansion.order, expansion.through
        for table_id in through:
            matched.setdefault(table_id, set()).add("join")
            if table_id not in scores:
                scores[table_id] = (
                    min(scores[t] for t in through[table_id] if t in scores) if through[table_id] else 0.0
                )
    allowed_order, copies_after = place_copies(
        session, allowed_order, rows, lambda r: principal.may_see_table(names[r.source_id], r), request.question
    )
    for table_id in allowed_order + copies_after:
        live = rows[table_id].copy_of_id
        if live is not None and live in scores:
            scores[live] = max(scores[live], scores.get(table_id, 0.0))  # a copy's relevance is its live table's
    k = request.k
    if request.adaptive:
        k = depth(allowed_order, {*firsts, *through}, k, min(MAX_K, k + ADAPTIVE_EXTRA))
    top = take_slots(allowed_order, copies_after, rows, k)
    queries.load_cards(session, rows, top)  # one statement for the shown tables' cards, read only now
    notes = readable_notes(session, principal, viewer, top, per_table=5)
    candidates = [
        build_candidate(
            rows[t],
            names[rows[t].source_id],
            scores.get(t, 0.0),
            matched.get(t, set()),
            notes.get(t, []),
            cards.shown(t),
            [rows[c].name for c in through.get(t, []) if c in rows],
            [m.contract() for m in values.get(t, [])[:5]],
            covers.get(t, []),
        )
        for t in top
    ]
    if len({c.database for c in candidates}) > 1:
        for candidate in candidates:
            candidate.marked_database = True
    return SearchResult(searched, candidates, denied, parts, example_hits)


class _ViewerCards:
    """Cards of the tables search found, as the principal may see them (`core.cards.card_view`), built when first asked:
    for ranking without the principal's own counts, for the candidates shown with them."""

    def __init__(
        self,
        principal: Principal,
        rows: dict[int, SourceTable],
        names: dict[int, str],
        reads: ViewerReads | None,
    ) -> None:
        self.principal = principal
        self.rows = rows
        self.names = names
        self.reads = reads
        self.built: dict[int, dict[str, Any]] = {}

    def __getitem__(self, table_id: int) -> dict[str, Any]:
        if table_id not in self.built:
            row = self.rows[table_id]
            self.built[table_id] = card_for_principal(self.principal, self.names[row.source_id], dict(row.card or {}))
        return self.built[table_id]

    def shown(self, table_id: int) -> dict[str, Any]:
        row = self.rows[table_id]
        database = self.names[row.source_id]
        facts = self.reads.table_facts(database, row, "codes") if self.reads is not None else None
        if facts is None:
            return self[table_id]
        return card_for_principal(self.principal, database, dict(row.card or {}), facts)

    def head(self, table_id: int) -> str:
        return card_head(self[table_id], self.rows[table_id].name)


def _rerank(
    reranker: Reranker,
    question: str,
    order: list[int],
    cards: _ViewerCards,
    note_texts: dict[int, list[str]],
    scores: dict[int, float],
) -> tuple[list[int], dict[int, float]]:
    """Reorder the head of the list by relevance of card head plus notes to the question."""
    head, rest = order[:RERANK_DEPTH], order[RERANK_DEPTH:]
    documents = []
    for table_id in head:
        documents.append("\n".join([cards.head(table_id), *note_texts.get(table_id, [])]))
    relevance = reranker.score(question, documents)
    ranked = sorted(zip(relevance, head, strict=True), key=lambda p: -p[0])
    new_scores = dict(scores)
    for value, table_id in ranked:
        new_scores[table_id] = round(float(value), 6)
    return [t for _, t in ranked] + rest, new_scores


def ensure_known_user(principal: Principal) -> None:
    if not principal.operator and not principal.in_directory:
        raise NotFoundError(
            f"user {principal.platform}:{principal.user_id} is not in the synced directory; "
            "check the id or run `tablescout directory sync`"
        )
