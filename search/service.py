"""Table search (SPEC §3): select databases, retrieve by meaning, words and notes, fuse, rerank, filter.

One Python API used in-process by the workers and the command line. The principal comes from the caller's
trusted context; it decides which databases are searched, which tables are returned and which are only named
in `denied_tables`. Copies are never removed, only placed directly behind their live table.

The request and answer types live in `search.request` and are re-exported here, as the search API's own names; the
steps each have a module: `search.source_choices`, `search.text_rankings`, `search.reranking`, `search.viewer_cards`.
"""

from __future__ import annotations

import re

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.access.users import UserRef
from core.access.viewer_facts import ViewerReads
from core.errors import NotFoundError
from core.store.repositories import search_queries as queries
from core.store.repositories import search_rows, search_stats
from core.store.repositories.search_batch import NoteQuery
from search import families
from search.candidates import build_candidate
from search.coverage import cover, depth
from search.database_selection import select_databases
from search.decomposition import decompose, phrases
from search.examples import examples_for
from search.fusion import best_first, reciprocal_rank_fusion
from search.join_expansion import expand
from search.limits import MAX_K as MAX_K
from search.masked_hits import MaskedHits
from search.multilingual import other_script
from search.notes import readable_notes, seen_in_full
from search.ordering import is_copy, place_copies, question_words, take_slots
from search.query_text import tsquery
from search.request import ALL_SIGNALS as ALL_SIGNALS
from search.request import DEFAULT_K as DEFAULT_K
from search.request import Encoders as Encoders
from search.request import Searched as Searched
from search.request import SearchInputError as SearchInputError
from search.request import SearchRequest as SearchRequest
from search.request import SearchResult as SearchResult
from search.request import validate_request
from search.reranking import RERANK_DEPTH, rerank
from search.source_choices import source_choices
from search.text_rankings import RETRIEVE, text_rankings
from search.values import VALUE_HITS, ValueMatch, matches_in, value_query, value_ranking, visible_matches
from search.viewer_cards import ViewerCards

#: A term of digits and date punctuation only ("2024", "2024-03") is a filter value, not a name of anything: as a
#: ranking of its own it would put every table with a year in its name (partitions, dated snapshots) ahead of the
#: table the question is about. The question's own ranking still weighs it once.
_FILTER_VALUE = re.compile(r"^[\d\s./:-]+$")
NOTE_SIMILARITY = 0.5
#: The weight of each phrase's rankings in the fusion (the whole question's weigh 1). Chosen by leaving one set out:
#: with any one set left out the other three choose 0.25 over 0.5 and 1.0 (`bench/results/retrieval.md`).
PART_WEIGHT = 0.25
#: The weight of the value ranking (tables holding values the question names) in the fusion.
VALUE_WEIGHT = 1.0
EXAMPLES = 3  # approved examples whose tables form one more ranking
#: The most candidates an adaptive search adds beyond k for the question's parts and connectors.
ADAPTIVE_EXTRA = 4


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
    validate_request(request)
    choices, total, pinned = source_choices(session, principal, request.databases)
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
    common = search_stats.common_words(session)
    names = {c.source_id: c.name for c in choices}
    masked = MaskedHits(session, principal, names, space)
    notes_asked = (
        NoteQuery(tsquery(request.question, common), english.tolist(), viewer, RETRIEVE, NOTE_SIMILARITY)
        if "note" in request.signals
        else None
    )
    values_query = value_query(request.question) if request.values else None
    # Chunks still waiting for their vector (search.refinement) are ranked in the fast space: one more ranking, read
    # with the others. Whether a searched source has any came with the sources; a refined store pays nothing.
    unrefined = [s for s in source_ids if s in search_stats.search_context(session).unrefined]
    fast_vector = (
        encoders.fast.embed([request.question])[0]
        if encoders.fast is not None and unrefined and "semantic" in request.signals and not multilingual
        else None
    )
    rankings, matched, part_rankings, others = text_rankings(
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
        notes_asked,  # read in the rankings' statement
        (values_query, VALUE_HITS) if values_query is not None else None,
        (fast_vector.tolist(), unrefined) if fast_vector is not None else None,
    )
    if fast_vector is not None:
        fast_hits = masked.semantic(others.fast, fast_vector, encoders.fast)
        fast_ranking = best_first((h.table_id, h.score) for h in fast_hits)
        rankings.append((fast_ranking, 1.0))
        for table_id in fast_ranking:
            matched.setdefault(table_id, set()).add("semantic")
    note_texts: dict[int, list[str]] = {}
    if notes_asked is not None:
        note_hits = others.notes
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
        found = matches_in(request.question, others.values)
        holders = search_rows.tables(session, list(found), with_cards=False)
        if not principal.operator:  # whether they may read a code's meaning is on the card: one statement for all
            search_rows.load_cards(session, holders, [t for t in found if any(m.meaning for m in found[t])])
        values = visible_matches(principal, found, holders, names, reads)
        by_value = value_ranking(values)
        rankings.append((by_value, VALUE_WEIGHT))
        for table_id in by_value:
            matched.setdefault(table_id, set()).add("value")
    fused = reciprocal_rank_fusion(rankings)
    order = sorted(fused, key=lambda t: (-fused[t], t))
    # cards are read for the shown tables only; the column names that families compare come with the rows for the
    # tables that lead (the families' window, unless denied tables push it further: those are read when needed)
    named = order[: families.WINDOW] if request.families else []
    rows, column_names = search_rows.tables_and_column_names(session, order, named)
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
    cards = ViewerCards(principal, rows, names, reads)
    if request.rerank and note_texts and any(t in note_texts for t in allowed_order[:RERANK_DEPTH]):
        search_rows.load_cards(session, rows, allowed_order[:RERANK_DEPTH])
        allowed_order, scores = rerank(encoders.reranker, request.question, allowed_order, cards, note_texts, scores)
    deferred: set[int] = set()
    if request.families:
        window = allowed_order[: families.WINDOW]
        otherwise = masked.sees_otherwise(window)
        read = set(named)
        unread = [t for t in window if t not in read]
        if unread:
            column_names |= search_rows.column_names(session, unread)
        grouped = families.group(
            allowed_order,
            rows,
            column_names,
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
    search_rows.load_cards(session, rows, top)  # one statement for the shown tables' cards, read only now
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


def ensure_known_user(principal: Principal) -> None:
    """Raise NotFoundError unless the principal is the operator or a user of the synced directory."""
    if not principal.operator and not principal.in_directory:
        raise NotFoundError(
            f"user {principal.platform}:{principal.user_id} is not in the synced directory; "
            "check the id or run `tablescout directory sync`"
        )
