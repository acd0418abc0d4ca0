"""A column written with the alias of the wrong table, put under the table that has it (the guided path).

A small model that joins two tables often writes `T2.name` where `name` is a column of T1, and the statement fails
with "no such column". When the qualified table has no such column and exactly one other table of the same SELECT
(its FROM and JOINs, not a subquery's) has it, there is one reading: the column is that table's. The statement is
rewritten before it runs, so the SQL the user sees is the SQL that ran. Anything uncertain (no table or two tables
with the column, a qualifier that names no table of the SELECT, a table the model was not shown, a statement that
does not parse) leaves the statement as written.

The same holds for an alias written short: `COUNT(*) AS num_products … ORDER BY num`, where no table of the SELECT
has a column `num` and exactly one of its aliases starts with it, orders by that alias.

When a statement fails on a column that no table it reads has but another shown table does (`PAY_MTHD_CD` read
from the invoice header when the payments table holds it), the repair call is told where the column is
(`elsewhere`). When the column it lacks is a date of the other table's rows (`REG_DT`, the customers'
registration, named on the orders), the line gives the read table's own dates instead: a period of orders is the
orders' date, and joining the customers for theirs counts the customers registered in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlglot import exp

from workers.tools.sql_help import unknown_column
from workers.turns.answer_checks import parse, tables_read
from workers.turns.code_meanings import meant_codes
from workers.turns.date_use import holds_dates
from workers.turns.join_paths import links
from workers.turns.join_pruning import Shown

#: Codes listed per column in a repair hint.
CODES_LISTED = 8


def requalified(sql: str, dialect: str | None, tables: Mapping[str, Shown]) -> str:
    """`sql` with each wrongly qualified column moved to the one table of its SELECT that has it; `sql` itself when
    none is. `tables`: the tables the model was shown, by upper-case name."""
    tree = parse(sql, dialect)
    if tree is None:
        return sql
    changed = False
    for select in tree.find_all(exp.Select):
        changed |= _aliases_completed(select, tables)
        own = {  # each table of this SELECT by its alias, lower-cased: (the alias as written, the table's name)
            t.alias_or_name.lower(): (t.alias_or_name, t.name.upper())
            for t in select.find_all(exp.Table)
            if t.find_ancestor(exp.Select) is select and t.name.upper() in tables
        }
        if len(own) < 2:
            continue
        for column in select.find_all(exp.Column):
            if column.find_ancestor(exp.Select) is not select or not column.table:
                continue
            qualifier, name = column.table.lower(), column.name.lower()
            if qualifier not in own or name in tables[own[qualifier][1]].columns:
                continue
            holders = [written for written, table in own.values() if name in tables[table].columns]
            if len(holders) == 1 and not _links_to_itself(column, holders[0]):
                column.set("table", exp.to_identifier(holders[0]))
                changed = True
    return tree.sql(dialect=dialect) if changed else sql


def _links_to_itself(column: exp.Column, holder: str) -> bool:
    """Moving `column` to `holder` would make a join condition compare two columns of one table (`T1.PRD_CD =
    T2.PRD_CD` where T2 lacks it: the join needs another table in between, not another qualifier)."""
    parent = column.parent
    if column.find_ancestor(exp.Join) is None or not isinstance(parent, exp.Binary):
        return False
    other = parent.right if parent.left is column else parent.left
    return isinstance(other, exp.Column) and other.table.lower() == holder.lower()


def _aliases_completed(select: exp.Select, tables: Mapping[str, Shown]) -> bool:
    """Each bare name in `select`'s ORDER BY, GROUP BY or HAVING that is no column of its tables and the start of
    exactly one of its aliases, replaced by that alias; whether any was."""
    aliases = [e.alias for e in select.expressions if e.alias]
    read = [t.name.upper() for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select]
    if not aliases or not read or any(t not in tables for t in read):
        return False
    columns = {c for t in read for c in tables[t].columns}
    changed = False
    for column in select.find_all(exp.Column):
        if column.table or column.find_ancestor(exp.Select) is not select:
            continue
        if column.find_ancestor(exp.Order, exp.Group, exp.Having) is None:
            continue
        name = column.name.lower()
        if name in columns or name in {a.lower() for a in aliases}:
            continue
        longer = [a for a in aliases if a.lower().startswith(name) and len(name) >= 2]
        if len(longer) == 1:
            column.replace(exp.column(longer[0]))
            changed = True
    return changed


def elsewhere(
    sql: str,
    dialect: str | None,
    error: str,
    shown: Sequence[tuple[str, Sequence[str]]],
    cards: Mapping[str, dict[str, Any]] | None = None,
) -> str:
    """A line for the repair call when `error` names a column that only shown tables the statement does not read
    hold ("" otherwise). `shown`: each table the model was shown, with its shown columns, as written; `cards`: their
    cards by upper-case name. When the holder is the code table of a column the statement reads, the line says to
    compare that column with its codes instead of joining the code table for their names."""
    column = unknown_column(error)
    if column is None:
        return ""
    qualifier, _, bare = column.rpartition(".")
    bare = bare.strip('"`')
    columns = {table.upper(): {c.upper(): c for c in names} for table, names in shown}
    read = {t.upper() for t in tables_read(sql, dialect)}
    holders = [table for table, _ in shown if bare.upper() in columns[table.upper()]]
    written = {table.upper(): table for table, _ in shown}
    through = _through(sql, dialect, qualifier.strip('"`'), bare, holders, read, columns, cards or {}, written)
    if through:
        return through
    if not holders or any(t.upper() in read for t in holders) or not read <= set(columns):
        return ""
    coded = _coded_from(holders, read, cards or {})
    if coded:
        return f"{bare} is a column of the code table {holders[0]}: " + "; ".join(coded) + "."
    own = _own_dates(sql, dialect, qualifier.strip('"`'), bare, holders, read, cards or {}, written)
    if own:
        return own
    reached = {c: w for t in holders for c, w in columns[t.upper()].items()}
    shared = sorted(w for t in read for c, w in columns[t].items() if c in reached)
    on = f" (shared columns: {', '.join(dict.fromkeys(shared))})" if shared else ""
    where = " or ".join(holders)
    return f"{bare} is a column of {where}, which the query does not read: join {where}{on}."


def _through(
    sql: str,
    dialect: str | None,
    qualifier: str,
    bare: str,
    holders: Sequence[str],
    read: set[str],
    columns: Mapping[str, Mapping[str, str]],
    cards: Mapping[str, dict[str, Any]],
    names: Mapping[str, str],
) -> str:
    """The join path when a join condition names a column of a read table that lacks it and a read table holds
    it (`RET_DTL.PRD_CD` to reach the products): a shown table the query does not read that holds the column and
    links to the table that lacks it, by a foreign key or inferred join of their cards or by key columns of the
    same name (the order lines, by order and line number)."""
    tree = parse(sql, dialect)
    if tree is None or not qualifier:
        return ""
    aliases = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table)}
    lacking = aliases.get(qualifier.upper())
    if lacking is None or lacking not in columns or bare.upper() in columns[lacking]:
        return ""
    reached = [h for h in holders if h.upper() in read]
    in_join = any(c.name.upper() == bare.upper() and c.find_ancestor(exp.Join) for c in tree.find_all(exp.Column))
    if not reached or not in_join:
        return ""
    name = names.get(lacking, lacking)
    for bridge in holders:
        if bridge.upper() in read:
            continue
        pairs = links(name, bridge, cards, columns)
        if pairs:
            on = " AND ".join(f"{name}.{a} = {bridge}.{b}" for a, b in pairs)
            return (
                f"{name} has no column {bare}. {bridge} has it and links to {name}: join {name} to {bridge} on {on}, "
                f"then {bridge} to {reached[0]} on {bare}."
            )
    return ""


def _own_dates(
    sql: str,
    dialect: str | None,
    qualifier: str,
    bare: str,
    holders: Sequence[str],
    read: set[str],
    cards: Mapping[str, dict[str, Any]],
    written: Mapping[str, str],
) -> str:
    """When the missing column is a date of the holders' rows and the table the statement names it on (its
    qualifier, or the one table it reads) has dates of its own: those, for a period of that table's rows. Joining
    the holder for its date would filter the rows by another thing's date (the customers' registration, not the
    orders')."""
    if not all(_dates(cards.get(h.upper()) or {}, {bare.upper()}) for h in holders):
        return ""
    tree = parse(sql, dialect)
    aliases = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table)} if tree is not None else {}
    lacking = aliases.get(qualifier.upper()) if qualifier else (next(iter(read)) if len(read) == 1 else None)
    if lacking is None or lacking not in read:
        return ""
    dates = _dates(cards.get(lacking) or {}, None)
    if not dates:
        return ""
    name = written.get(lacking, lacking)
    which = dates[0] if len(dates) == 1 else f"{', '.join(dates[:-1])} or {dates[-1]} (the one the question means)"
    return (
        f"{name} has no column {bare}: write {which} instead of {bare}. Do not join {' or '.join(holders)} for "
        f"{bare}: that is the date of {' and '.join(holders)} rows, not of {name} rows."
    )


def _dates(card: dict[str, Any], only: set[str] | None) -> list[str]:
    """The card's columns that hold dates (of those in `only`, upper-case, when given), as written."""
    return [
        str(c["name"])
        for c in card.get("columns") or []
        if isinstance(c, dict) and c.get("name") and (only is None or str(c["name"]).upper() in only) and holds_dates(c)
    ]


def _coded_from(holders: Sequence[str], read: set[str], cards: Mapping[str, dict[str, Any]]) -> list[str]:
    """For each column of the read tables whose codes come from one of `holders`: compare it with its codes."""
    wanted = {h.upper() for h in holders}
    said = []
    for table in sorted(read):
        for column in (cards.get(table) or {}).get("columns", []):
            origins = {str(o[-1]).upper() for o in column.get("codes_from") or [] if o}
            codes = meant_codes(column)
            if not origins & wanted or not codes:
                continue
            listed = ", ".join(f"{c['code']}={c.get('meaning') or '?'}" for c in codes[:CODES_LISTED])
            more = ", …" if len(codes) > CODES_LISTED else ""
            said.append(
                f"{column['name']} already holds its codes ({listed}{more}): compare {column['name']} with the code"
            )
    return said[:3]
