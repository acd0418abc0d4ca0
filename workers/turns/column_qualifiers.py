"""A column written with the alias of the wrong table, put under the table that has it (the guided path).

A small model that joins two tables often writes `T2.name` where `name` is a column of T1, and the statement fails
with "no such column". When the qualified table has no such column and exactly one other table of the same SELECT
(its FROM and JOINs, not a subquery's) has it, there is one reading: the column is that table's. The statement is
rewritten before it runs, so the SQL the user sees is the SQL that ran. Anything uncertain (no table or two tables
with the column, a qualifier that names no table of the SELECT, a table the model was not shown, a statement that
does not parse) leaves the statement as written.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from workers.turns.answer_checks import parse
from workers.turns.join_pruning import Shown


def requalified(sql: str, dialect: str | None, tables: Mapping[str, Shown]) -> str:
    """`sql` with each wrongly qualified column moved to the one table of its SELECT that has it; `sql` itself when
    none is. `tables`: the tables the model was shown, by upper-case name."""
    tree = parse(sql, dialect)
    if tree is None:
        return sql
    changed = False
    for select in tree.find_all(exp.Select):
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
            if len(holders) == 1:
                column.set("table", exp.to_identifier(holders[0]))
                changed = True
    return tree.sql(dialect=dialect) if changed else sql
