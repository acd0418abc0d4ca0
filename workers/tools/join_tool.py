"""`find_join_path`: declared keys apart from inferred candidates, and the shortest path connecting the tables.

Only tables the user may see are ever part of a path, so a join route never passes through a hidden table, and a
join on a column hidden from the user (a `hide` column mask) is not listed nor used.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from core.cards.card_policies import basis_without_figures
from core.cards.card_view import rows_differ_for
from core.store.models import JoinCandidate, SourceTable
from core.store.repositories import catalog as catalog_repo
from core.text.naming import humanise
from workers.models.types import ToolSpec
from workers.tools.base import (
    Tool,
    ToolContext,
    ToolInputError,
    ToolOutput,
    list_argument,
    queryable_source,
    shown_table,
    text_argument,
    visible_table,
)

MAX_TABLES = 6
#: Inferred candidates below this confidence are listed but never used to connect tables.
PATH_CONFIDENCE = 0.6

JOIN_SPEC = ToolSpec(
    name="find_join_path",
    description=(
        "How tables of one database join: declared foreign keys, inferred join candidates (basis, confidence), "
        "and the shortest path connecting all the given tables."
    ),
    parameters={
        "type": "object",
        "properties": {
            "database": {"type": "string"},
            "tables": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": MAX_TABLES},
        },
        "required": ["database", "tables"],
    },
)


def _describe(join: JoinCandidate, names: dict[int, str], figures: bool = True) -> str:
    """The join as text; without `figures` its basis leaves out the sample counts read from every row."""
    text = (
        f"{names[join.from_table_id]}({', '.join(join.from_columns)}) = "
        f"{names[join.to_table_id]}({', '.join(join.to_columns)})"
    )
    if join.kind == "inferred":
        text += f" [inferred {join.confidence:.2f}: {join.basis if figures else basis_without_figures(join.basis)}]"
    return text


def _shortest(start: int, goal: int, edges: dict[int, list[JoinCandidate]]) -> list[JoinCandidate] | None:
    """Breadth-first: fewest joins, declared keys tried before inferred ones at each step."""
    previous: dict[int, tuple[int, JoinCandidate] | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path: list[JoinCandidate] = []
            step = previous[node]
            while step is not None:
                path.append(step[1])
                step = previous[step[0]]
            return path[::-1]
        for join in sorted(edges.get(node, []), key=lambda j: (j.kind != "declared", -j.confidence)):
            other = join.to_table_id if join.from_table_id == node else join.from_table_id
            if other not in previous:
                previous[other] = (node, join)
                queue.append(other)
    return None


def _shows(context: ToolContext, database: str, table: SourceTable, columns: list[str]) -> bool:
    """Does the user see every one of these columns? A join on a hidden column does not exist for them."""
    masks = context.principal.column_masks(database, table.name, list(columns), table.schema_name or None)
    return "hide" not in masks.values()


def run_join(context: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    label = text_argument(arguments, "database")
    assert label is not None
    wanted = list_argument(arguments, "tables")
    if not 2 <= len(wanted) <= MAX_TABLES:
        raise ToolInputError(f"give between 2 and {MAX_TABLES} tables")
    source = queryable_source(context, label)
    chosen: list[SourceTable] = [visible_table(context, source, name) for name in wanted]
    tables = {t.id: t for t in catalog_repo.tables_of(context.session, source.id)}
    seen = {t_id for t_id, t in tables.items() if t.visible and context.principal.may_see_table(source.name, t)}
    names = {t_id: t.name for t_id, t in tables.items()}
    joins = [
        j
        for j in catalog_repo.joins_of(context.session, source.id)
        if {j.from_table_id, j.to_table_id} <= seen
        and _shows(context, source.name, tables[j.from_table_id], j.from_columns)
        and _shows(context, source.name, tables[j.to_table_id], j.to_columns)
    ]
    ids = {t.id for t in chosen}
    direct = [j for j in joins if {j.from_table_id, j.to_table_id} <= ids]
    lines = [f"Joins among {', '.join(t.name for t in chosen)} in {source.name}:"]
    # The basis of an inferred join counts sampled values of both tables, read from every row.
    differ = {t_id for t_id in seen if rows_differ_for(context.principal, source.name, tables[t_id])}
    declared = [_describe(j, names) for j in direct if j.kind == "declared"]
    inferred = [
        _describe(j, names, figures=not {j.from_table_id, j.to_table_id} & differ)
        for j in direct
        if j.kind == "inferred"
    ]
    lines.append("Declared keys: " + ("; ".join(declared) if declared else "none"))
    lines.append("Inferred candidates: " + ("; ".join(inferred) if inferred else "none"))
    edges: dict[int, list[JoinCandidate]] = {}
    for join in joins:
        if join.kind == "declared" or join.confidence >= PATH_CONFIDENCE:
            edges.setdefault(join.from_table_id, []).append(join)
            edges.setdefault(join.to_table_id, []).append(join)
    path: list[JoinCandidate] = []
    joined = {chosen[0].id}
    for table in chosen[1:]:
        if table.id in joined:
            continue
        step = _shortest(chosen[0].id, table.id, edges)
        if step is None:
            lines.append(f"No path connects {chosen[0].name} and {table.name} through declared or verified joins.")
            return ToolOutput("\n".join(lines))
        for join in step:
            if join not in path:
                path.append(join)
                joined.update((join.from_table_id, join.to_table_id))
    lines.append(
        "Shortest path: "
        + " → ".join(_describe(j, names, figures=not {j.from_table_id, j.to_table_id} & differ) for j in path)
    )
    return ToolOutput("\n".join(lines))


def _status(context: ToolContext, arguments: dict[str, Any]) -> str:
    tables = arguments.get("tables")
    names = [shown_table(context, arguments, t) for t in tables] if isinstance(tables, list) else []
    if names and all(names):
        return f"Finding how {_listed([humanise(str(n)) for n in names])} join…"
    return "Finding how the tables join…"


def _listed(words: list[str]) -> str:
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else words[0]


JOIN_TOOL = Tool(JOIN_SPEC, run_join, _status)
