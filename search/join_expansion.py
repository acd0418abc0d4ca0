"""Join-graph expansion: the tables that connect the leading candidates (link tables no question names).

After ranking, the first `LEADERS` live candidates of each database are joined pairwise through the join graph
(declared keys and inferred joins of at least `PATH_CONFIDENCE`) by a shortest path of at most `MAX_HOPS`
joins; the tables on those paths are connectors. A connector the ranking did not already place ahead is put
right behind the later of the two candidates it connects, so direct hits above that point keep their places; a
join column of a leader that names the question's words brings the table it refers to right behind the leader;
and the other direct neighbours of the leaders (hubs apart) come after the first `NEIGHBOURS_AT` tables, ahead of
the long tail (a question over a schema of link tables needs them more often than the 20th direct hit).
Only tables and join columns the reader may see are ever part of a path, as in `find_join_path`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.store.models import JoinCandidate, SourceTable
from core.store.repositories import join_graph
from core.store.repositories import search_queries as queries
from core.text.name_words import default_name_words
from search.query_text import STOPWORDS, stem, words

#: How many of the best live candidates per database are connected to one another.
LEADERS = 6
#: Joins on a shortest path between two candidates (3: up to two link tables between them).
MAX_HOPS = 3
#: Inferred joins below this confidence never connect tables (the same rule as `find_join_path`).
PATH_CONFIDENCE = 0.6
#: A join column naming at least this many of the question's words (`HASLASTTRADEDVALUE` for "last traded
#: value") brings the table it refers to, when it holds the attribute the question asks for.
COLUMN_WORDS = 2
#: Where the direct neighbours of the leading candidates are placed (None: not at all): below the direct hits a
#: question is likely to need, above the long tail.
NEIGHBOURS_AT: int | None = 8
#: A table joined to more tables than this is a hub (a supertype, a code table everyone refers to): it connects
#: everything, so it says nothing about a question and is never brought in as a connector.
HUB_DEGREE = 8


@dataclass
class Expansion:
    order: list[int]
    through: dict[int, list[int]] = field(default_factory=dict)  # connector → the candidates it connects


def _other(join: JoinCandidate, node: int) -> int:
    return join.to_table_id if join.from_table_id == node else join.from_table_id


class _Graph:
    """Adjacency over the joins fetched so far, limited to what the reader may use."""

    def __init__(self, usable: Callable[[JoinCandidate], bool]) -> None:
        self.usable = usable
        self.adjacent: dict[int, dict[int, JoinCandidate]] = {}

    def add(self, joins: Sequence[JoinCandidate]) -> None:
        for join in joins:
            if join.from_table_id == join.to_table_id or not self.usable(join):
                continue
            for a, b in ((join.from_table_id, join.to_table_id), (join.to_table_id, join.from_table_id)):
                known = self.adjacent.setdefault(a, {}).get(b)
                if known is None or (known.kind != "declared" and join.kind == "declared"):
                    self.adjacent[a][b] = join

    def neighbours(self, node: int) -> list[int]:
        return sorted(self.adjacent.get(node, {}))

    def path(self, start: int, goal: int, allowed: Callable[[int], bool]) -> list[int] | None:
        """Tables strictly between `start` and `goal` on a shortest path of at most MAX_HOPS joins."""
        frontier: dict[int, list[int]] = {start: []}
        seen = {start}
        for _ in range(MAX_HOPS):
            following: dict[int, list[int]] = {}
            for node, between in frontier.items():
                for other in self.neighbours(node):
                    if other == goal:
                        return between
                    if other in seen or not allowed(other):
                        continue
                    seen.add(other)
                    following[other] = [*between, other]
            frontier = following
        return None


def named_column(join: JoinCandidate, leader: int, question: set[str], own_name: str) -> bool:
    """Does the leader's side of the join name enough of the question's words, beyond the leader's own name?
    (The key `raceId` of `races` names only races itself, and every table joined to races shares it.)"""
    columns = join.from_columns if join.from_table_id == leader else join.to_columns
    words = {w for c in columns for w in column_words(c)} - column_words(own_name)
    return len(words & question) >= min(COLUMN_WORDS, len(words)) > 0


def column_words(column: str) -> set[str]:
    found: set[str] = set()
    for word in default_name_words().split(column):
        if len(word) > 2 and word not in STOPWORDS:
            found.update((word, stem(word)))
    return found


def expand(
    session: Session,
    principal: Principal,
    order: list[int],
    rows: dict[int, SourceTable],
    names: dict[int, str],
    is_copy: Callable[[SourceTable], bool],
    question: str = "",
) -> Expansion:
    """`order` with connectors of its leading candidates placed behind the later candidate of each pair."""
    leaders: dict[int, list[int]] = {}
    for table_id in order:
        row = rows[table_id]
        group = leaders.setdefault(row.source_id, [])
        if len(group) < LEADERS and not is_copy(row):
            group.append(table_id)
    pairs = [pair for group in leaders.values() for pair in combinations(group, 2)]
    if not pairs:
        return Expansion(list(order))

    def usable(join: JoinCandidate) -> bool:
        return _columns_seen(principal, rows, names, join)

    graph = _Graph(usable)
    first = join_graph.edges_touching(session, {t for pair in pairs for t in pair}, PATH_CONFIDENCE)
    reached = {_other(j, t) for j in first for t in (j.from_table_id, j.to_table_id)} - set(rows)
    _fetch(session, reached, rows, names)
    graph.add([j for j in first if j.from_table_id in rows and j.to_table_id in rows])
    ring = {n for pair in pairs for t in pair for n in graph.neighbours(t)} - {t for p in pairs for t in p}
    second = join_graph.edges_touching(session, ring, PATH_CONFIDENCE)
    _fetch(session, {x for j in second for x in (j.from_table_id, j.to_table_id)} - set(rows), rows, names)
    graph.add([j for j in second if j.from_table_id in rows and j.to_table_id in rows])

    degree = join_graph.degrees(session, ring)

    def allowed(table_id: int) -> bool:
        row = rows.get(table_id)
        if row is None or not row.visible or is_copy(row) or degree.get(table_id, 0) > HUB_DEGREE:
            return False
        return principal.may_see_table(names[row.source_id], row)

    position = {t: i for i, t in enumerate(order)}
    after: dict[int, list[int]] = {}  # candidate → connectors to place right behind it
    through: dict[int, list[int]] = {}
    asked = set(words(question))
    for leader in [t for group in leaders.values() for t in group]:
        for join in first:
            if leader not in (join.from_table_id, join.to_table_id):
                continue
            target = _other(join, leader)
            if target not in rows or not named_column(join, leader, asked, rows[leader].name):
                continue
            if not usable(join) or not allowed(target) or target in through:
                continue
            if target in position and position[target] < position[leader]:
                continue
            after.setdefault(leader, []).append(target)
            through[target] = [leader]
    for a, b in sorted(pairs, key=lambda p: (max(position[p[0]], position[p[1]]), min(position[p[0]], position[p[1]]))):
        later = a if position[a] > position[b] else b
        for connector in graph.path(a, b, allowed) or []:
            if connector in position and position[connector] < position[later]:
                continue
            if connector not in through:
                after.setdefault(later, []).append(connector)
            through.setdefault(connector, [])
            for end in (a, b):
                if end not in through[connector]:
                    through[connector].append(end)
    placed = {c for group in after.values() for c in group}
    result: list[int] = []
    for table_id in order:
        if table_id in placed:
            continue
        result.append(table_id)
        result.extend(c for c in after.get(table_id, []) if c not in result)
    if NEIGHBOURS_AT is not None:
        head, rest = result[:NEIGHBOURS_AT], result[NEIGHBOURS_AT:]
        near: list[int] = []
        for leader in [t for group in leaders.values() for t in sorted(group, key=position.__getitem__)]:
            # A leader's neighbours in their own ranking order; the ones retrieval missed after them.
            for other in sorted(graph.neighbours(leader), key=lambda t: position.get(t, len(order))):
                if other not in head and other not in near and allowed(other):
                    near.append(other)
                    through.setdefault(other, [leader])
        result = head + near + [t for t in rest if t not in near]
    return Expansion(result, through)


def _fetch(session: Session, ids: set[int], rows: dict[int, SourceTable], names: dict[int, str]) -> None:
    """Rows of tables reached through joins, from the databases being searched only."""
    for table_id, row in queries.tables(session, sorted(ids), with_cards=False).items():
        if row.source_id in names:
            rows[table_id] = row


def _columns_seen(
    principal: Principal, rows: dict[int, SourceTable], names: dict[int, str], join: JoinCandidate
) -> bool:
    """A join on a column hidden from the reader does not exist for them."""
    for table_id, columns in ((join.from_table_id, join.from_columns), (join.to_table_id, join.to_columns)):
        row = rows.get(table_id)
        if row is None:
            return False
        masks = principal.column_masks(names[row.source_id], row.name, list(columns), row.schema_name or None)
        if "hide" in masks.values():
            return False
    return True
