"""The tables a guided turn (`workers.turns.guided`) shows the model: their compact schema, the values the question
names linked onto them, tables a check or a statement needs added as the user may see them, the probes of their
values (as the user may read them), and the search as the turn's record shows it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy.orm import Session

from workers.sql.guard import dialect_for
from workers.sql.value_probe import held_values, sample_values
from workers.tools.base import ToolInputError, queryable_source, viewer_card, visible_table
from workers.tools.sql_help import unknown_column
from workers.turns import compact_schema
from workers.turns.answer_checks import Probes, parse, tables_read
from workers.turns.compact_schema import SchemaTable
from workers.turns.date_arguments import dated_argument
from workers.turns.guided_run import GuidedTurn
from workers.turns.join_checks import DisjointJoin, disjoint_joins
from workers.turns.join_drops import DroppedJoin, without_disjoint_join, without_missing_column_join
from workers.turns.join_paths import Bridged, bridged, looked_up, relinked
from workers.turns.selection import Selection
from workers.turns.statement_filters import Unfiltered
from workers.turns.unknown_filters import without_unknown_filter
from workers.turns.value_linking import linked_values


def read_tables(guided: GuidedTurn, selection: Selection, sql: str, tables: dict[str, SchemaTable]) -> None:
    """Add to `tables` the tables `sql` reads that the schema did not show (their cards as the user sees them)."""
    context = guided.context
    missing = [n for n in tables_read(sql, dialect_for(selection.engine)) if n.upper() not in tables]
    if not missing:
        return
    source = queryable_source(context, selection.database)
    for name in missing:
        try:
            row = visible_table(context, source, name)
        except ToolInputError:
            continue
        tables[name.upper()] = SchemaTable(row.name, row.schema_name or None, viewer_card(context, source, row))


def grown(guided: GuidedTurn, selection: Selection, names: Sequence[str]) -> Selection:
    """`selection` with the tables `names` of its database added (those the user may see), its schema rendered."""
    known = {t.name.upper() for t in selection.tables}
    wanted = [n for n in dict.fromkeys(names) if n and n.upper() not in known]
    if not wanted:
        return selection
    context = guided.context
    with guided.env.store.transaction() as session:
        context.session = session
        source = queryable_source(context, selection.database)
        added = []
        for name in wanted:
            try:
                row = visible_table(context, source, name)
            except ToolInputError:
                continue
            added.append(SchemaTable(row.name, row.schema_name or None, viewer_card(context, source, row)))
        if not added:
            return selection
        grown = replace(selection, tables=[*added, *selection.tables])
        load_schema(guided, grown)
    return grown


def link_values(guided: GuidedTurn, selection: Selection, question: str) -> None:
    """Values the question names in another script (`workers.turns.value_linking`), added to those search found:
    on the chosen tables they are written into the compact schema."""
    context = guided.context
    source = queryable_source(context, selection.database)
    linked = linked_values(context, question, [source.id])
    selection.linked += linked
    for table in selection.tables:
        for value in linked:
            if value.table.upper() == table.name.upper():
                held = {"column": value.column, "value": value.value, "said": value.said}
                table.values.insert(0, held | ({"meaning": value.meaning} if value.meaning else {}))


def search_text(searched: str, candidates: Sequence[Any], denied: Sequence[str]) -> str:
    """The search as the turn's record shows it: what was searched, the candidates ranked, the tables denied."""
    lines = [searched]
    for rank, c in enumerate(candidates, start=1):
        extra = f" joins {' and '.join(c.through)}" if c.through else ""
        lines.append(f"{rank}. {c.database}.{c.table} [{c.role}] {c.score:.4f} {','.join(c.matched_by)}{extra}")
    if denied:
        lines.append("denied_tables: " + ", ".join(denied))
    return "\n".join(lines)


def load_schema(guided: GuidedTurn, selection: Selection) -> None:
    """The compact schema of the selection's tables (example rows read now, in the caller's transaction)."""
    context = guided.context
    source = queryable_source(context, selection.database)
    selection.schema = compact_schema.render(context, source, selection.tables)
    for table in selection.tables:
        context.opened.add((source.name, table.name.upper()))


def probes_for(guided: GuidedTurn, session: Session, selection: Selection, tables: dict[str, SchemaTable]) -> Probes:
    """The value probes of `tables` (by upper-case name) of the selection's database, run as the turn's user in
    `session` (`workers.sql.value_probe`)."""
    context = guided.context
    args = (session, context.settings, context.principal)

    def where(table: str) -> dict[str, Any]:
        found = tables[table]
        return {
            "database": selection.database,
            "engine": selection.engine,
            "table": found.name,
            "schema": found.schema,
            "turn_id": context.turn_id,
        }

    return Probes(
        held=lambda t, c, values: held_values(*args, **where(t), column=c, literals=values),
        sample=lambda t, c: sample_values(*args, **where(t), column=c),
    )


def join_misses(guided: GuidedTurn, selection: Selection, sql: str) -> tuple[list[DisjointJoin], DroppedJoin | None]:
    """For a statement that returned no rows: its join conditions whose columns share no values, and the statement
    without the first of those joins whose table only filters (`workers.turns.join_drops`), if there is one."""
    dialect = dialect_for(selection.engine)
    tree = parse(sql, dialect)
    if tree is None:
        return [], None
    tables = {t.name.upper(): t for t in selection.tables}
    with guided.env.store.transaction() as session:
        guided.context.session = session
        read_tables(guided, selection, sql, tables)
        probes = probes_for(guided, session, selection, tables)
        cards = {name: t.card for name, t in tables.items()}
        found = disjoint_joins(tree, cards, probes.sample, probes.held)
    columns = {n: {str(c.get("name") or "").upper() for c in t.card.get("columns") or []} for n, t in tables.items()}
    return found, without_disjoint_join(sql, dialect, found, columns) if found else None


def missing_column_fix(
    selection: Selection, sql: str, error: str, question: str
) -> DroppedJoin | Bridged | Unfiltered | None:
    """For a statement that failed on a column a table of a join lacks (`error`: what run_sql answered): the
    statement without that join when its table only filters (`workers.turns.join_drops`), else with the condition
    replaced by the cards' link between its two tables, else with the one shown table in between joined, else
    (a column it selects or filters on) with the one shown table holding it joined (`workers.turns.join_paths`),
    else (a date function's argument) with the one date column of the tables read (`workers.turns.date_arguments`),
    else without a filter on it whose value the question does not name (`workers.turns.unknown_filters`); None when
    no reading is sure."""
    column = unknown_column(error)
    if column is None:
        return None
    dialect = dialect_for(selection.engine)
    columns = {
        t.name.upper(): {str(c.get("name") or "").upper(): str(c.get("name")) for c in t.card.get("columns") or []}
        for t in selection.tables
    }
    dropped = without_missing_column_join(sql, dialect, column, {t: set(c) for t, c in columns.items()})
    if dropped is not None:
        return dropped
    cards = {t.name.upper(): t.card for t in selection.tables}
    direct = relinked(sql, dialect, column, columns, cards)
    if direct is not None:
        return direct
    names = {t.name.upper(): t.name for t in selection.tables}
    between = bridged(sql, dialect, column, columns, cards, names)
    return (
        between
        or looked_up(sql, dialect, column, columns, cards, names)
        or dated_argument(sql, dialect, column, cards)
        or without_unknown_filter(sql, dialect, column, question, cards)
    )
