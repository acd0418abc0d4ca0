"""The table in between, for a join on a column one of its tables lacks (the guided path, after the error).

A small model that joins two tables a third links writes the join as if they were linked directly: returns to
products on `RET_DTL.PRD_CD`, which only the order lines hold, or `cars_data.Model = model_list.Model`, where
`car_names` holds the model and links to `cars_data` by `Id = MakeId`. The statement fails with "no such column",
and a repair call told where the column is often writes the same join again. When exactly one table the model was
shown and the statement does not read holds the column and links to the table that lacks it (a foreign key or
inferred join of either card, or key columns both have by name) by a link covering its primary key (so each row
of the table that lacks the column matches one row of it at most), the statement runs again with that table
joined in between; the answer says so. The repair hint names the same path (`workers.turns.column_qualifiers`).
A column selected, filtered or ordered by on a table that lacks it takes the one shown table holding it the same
way (`looked_up`), the column read from it. When the two tables the condition compares are linked directly
(`cars_data.MakeId = car_names.MakeId`, where the foreign key is `cars_data.Id = car_names.MakeId`), the condition
is replaced by that link instead (`relinked`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from workers.turns.answer_checks import parse


@dataclass(frozen=True)
class Bridged:
    """The statement with the table in between joined, and the note the answer carries."""

    sql: str
    note: str


def keys(card: dict[str, Any]) -> set[str]:
    """The columns (upper case) of a card's primary key and foreign keys."""
    foreign = [c for fk in card.get("foreign_keys") or [] for c in fk.get("columns") or []]
    named = list(card.get("primary_key") or []) + foreign
    return {str(n).upper() for n in named}


def links(
    table: str, other: str, cards: Mapping[str, dict[str, Any]], columns: Mapping[str, Mapping[str, str]]
) -> list[tuple[str, str]]:
    """The column pairs (table's, other's) that link two shown tables: a foreign key or inferred join of either
    card to the other, else the key columns both have by name; [] when none. `cards` and `columns` (upper-case
    column name → as written) by upper-case table name."""
    for source, target, flip in ((table, other, False), (other, table, True)):
        card = cards.get(source.upper()) or {}
        found = [
            (fk.get("references"), fk.get("columns"), fk.get("ref_columns")) for fk in card.get("foreign_keys") or []
        ]
        found += [(j.get("to"), j.get("from_columns"), j.get("to_columns")) for j in card.get("joins") or []]
        for to, mine, theirs in found:
            if str(to or "").upper() == target.upper() and mine and theirs and len(mine) == len(theirs):
                pairs = list(zip((str(c) for c in mine), (str(c) for c in theirs), strict=True))
                return [(b, a) for a, b in pairs] if flip else pairs
    shared = keys(cards.get(table.upper()) or {}) | keys(cards.get(other.upper()) or {})
    mine, theirs = columns.get(table.upper(), {}), columns.get(other.upper(), {})
    return [(w, theirs[c]) for c, w in mine.items() if c in theirs and c in shared]


def relinked(
    sql: str,
    dialect: str | None,
    column: str,
    columns: Mapping[str, Mapping[str, str]],
    cards: Mapping[str, dict[str, Any]],
) -> Bridged | None:
    """`sql` with a join condition that names `column` (qualified, as the engine's error writes it) of a table that
    lacks it replaced by the link the cards give between the two tables it compares (`cars_data.MakeId =
    car_names.MakeId` becomes `cars_data.Id = car_names.MakeId`, the foreign key); None when they have none, or
    when it covers the primary key of neither table."""
    found = _missing(sql, dialect, column, columns)
    if found is None:
        return None
    tree, tables, lacking, name, (_, equal, missing, other) = found
    partner = tables.get(other.table.upper())
    if partner is None or partner.name.upper() == lacking.name.upper():
        return None
    pairs = links(lacking.name, partner.name, cards, columns)
    one = _covers(partner.name.upper(), pairs, cards) or _covers(
        lacking.name.upper(), [(b, a) for a, b in pairs], cards
    )
    if not one:
        return None  # a link that matches many rows on both sides would multiply what the statement adds up
    link = exp.and_(
        *(
            exp.EQ(this=exp.column(a, table=missing.table), expression=exp.column(b, table=other.table))
            for a, b in pairs
        )
    )
    equal.replace(link)
    on = " AND ".join(f"{lacking.name}.{a} = {partner.name}.{b}" for a, b in pairs)
    note = f"I joined {lacking.name} to {partner.name} on {on}: {lacking.name} has no column {name}."
    return Bridged(tree.sql(dialect=dialect), note)


def bridged(
    sql: str,
    dialect: str | None,
    column: str,
    columns: Mapping[str, Mapping[str, str]],
    cards: Mapping[str, dict[str, Any]],
    names: Mapping[str, str],
) -> Bridged | None:
    """`sql` with the one shown table in between joined where a join condition names `column` (qualified, as the
    engine's error writes it) of a table that lacks it; None when there is no such single reading. `columns`:
    the shown tables' columns (upper case → as written), `cards` their cards, `names` their names as written, all
    by upper-case table name."""
    found = _missing(sql, dialect, column, columns)
    if found is None:
        return None
    tree, tables, lacking, name, (join, equal, missing, other) = found
    read = {t.name.upper() for t in tables.values()}
    bridges = [
        t
        for t in columns
        if t not in read and name.upper() in columns[t] and _covers(t, links(lacking.name, t, cards, columns), cards)
    ]
    if len(bridges) != 1:
        return None
    bridge = bridges[0]
    pairs = links(lacking.name, bridge, cards, columns)
    alias = next(a for a in (names.get(bridge, bridge), *(f"B{n}" for n in range(1, 10))) if a.upper() not in tables)
    held = exp.column(columns[bridge][name.upper()], table=alias)
    link = exp.and_(
        *(exp.EQ(this=exp.column(a, table=missing.table), expression=exp.column(b, table=alias)) for a, b in pairs)
    )
    between = exp.Table(this=exp.to_identifier(names.get(bridge, bridge)))
    if alias != names.get(bridge, bridge):
        between.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    joins = list(tree.args.get("joins") or [])
    index = joins.index(join)
    if join.this is lacking:  # JOIN lacking ON other.C = lacking.C: the bridge first, joined to the other table
        equal.replace(link)
        added = exp.Join(this=between, on=exp.EQ(this=held, expression=other.copy()))
    else:  # the lacking table is in scope already: the bridge joins it, the other table joins the bridge
        missing.replace(held.copy())
        added = exp.Join(this=between, on=link)
    joins.insert(index, added)
    tree.set("joins", joins)
    note = (
        f"I joined {lacking.name} to {other.table and tables[other.table.upper()].name} through "
        f"{names.get(bridge, bridge)}: {lacking.name} has no column {name}."
    )
    return Bridged(tree.sql(dialect=dialect), note)


def looked_up(
    sql: str,
    dialect: str | None,
    column: str,
    columns: Mapping[str, Mapping[str, str]],
    cards: Mapping[str, dict[str, Any]],
    names: Mapping[str, str],
) -> Bridged | None:
    """`sql` with the one shown table it does not read that holds `column` (qualified, as the engine's error writes
    it), named outside a join condition (selected, filtered, grouped or ordered by) on a table of the outer query
    that lacks it: that table is joined to the one lacking the column by a link covering its own primary key (each
    row gains one row at most, so nothing is multiplied), and every reference to the column reads it from there
    (`course_arrange.Course` becomes `course.Course`, joined on `Course_ID`). None when no single such table."""
    qualifier, name = _qualified(column)
    tree = parse(sql, dialect)
    if not qualifier or not isinstance(tree, exp.Select) or _condition(tree, qualifier, name) is not None:
        return None
    source = tree.args.get("from_")
    outer = [source.this] if isinstance(source, exp.From) else []
    outer += [j.this for j in tree.args.get("joins") or []]
    tables = {t.alias_or_name.upper(): t for t in outer if isinstance(t, exp.Table)}
    lacking = tables.get(qualifier.upper())
    if lacking is None or name.upper() in columns.get(lacking.name.upper(), {name.upper(): name}):
        return None
    read = {t.name.upper() for t in tree.find_all(exp.Table)}
    holders = [t for t in columns if t not in read and name.upper() in columns[t]]
    pairs = links(lacking.name, holders[0], cards, columns) if len(holders) == 1 else []
    if not _covers(holders[0] if holders else "", pairs, cards):
        return None
    holder = names.get(holders[0], holders[0])
    alias = next(a for a in (holder, *(f"L{n}" for n in range(1, 10))) if a.upper() not in tables)
    for node in list(tree.find_all(exp.Column)):
        if node.table.upper() == qualifier.upper() and node.name.upper() == name.upper():
            node.replace(exp.column(columns[holders[0]][name.upper()], table=alias))
    joined = exp.Table(this=exp.to_identifier(holder))
    if alias != holder:
        joined.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    link = exp.and_(
        *(exp.EQ(this=exp.column(a, table=qualifier), expression=exp.column(b, table=alias)) for a, b in pairs)
    )
    tree.set("joins", [*(tree.args.get("joins") or []), exp.Join(this=joined, on=link)])
    on = " AND ".join(f"{lacking.name}.{a} = {holder}.{b}" for a, b in pairs)
    note = f"I read {name} from {holder}, joined to {lacking.name} on {on}: {lacking.name} has no column {name}."
    return Bridged(tree.sql(dialect=dialect), note)


def _missing(
    sql: str, dialect: str | None, column: str, columns: Mapping[str, Mapping[str, str]]
) -> tuple[exp.Select, dict[str, exp.Table], exp.Table, str, tuple[exp.Join, exp.EQ, exp.Column, exp.Column]] | None:
    """For `column` (qualified, as the engine's error writes it) of a shown table that lacks it, named in an inner
    join's equality: the parsed statement, its tables by upper-case alias, the table that lacks the column, the
    column's name and the join condition (`_condition`); None otherwise."""
    qualifier, name = _qualified(column)
    tree = parse(sql, dialect)
    if not qualifier or not isinstance(tree, exp.Select):
        return None
    tables = {t.alias_or_name.upper(): t for t in tree.find_all(exp.Table)}
    lacking = tables.get(qualifier.upper())
    if lacking is None or name.upper() in columns.get(lacking.name.upper(), {name.upper(): name}):
        return None
    found = _condition(tree, qualifier, name)
    return None if found is None else (tree, tables, lacking, name, found)


def _qualified(column: str) -> tuple[str, str]:
    """(qualifier, name) of a column as an engine's error writes it (`T1.PRD_CD`, quoted or not); "" when bare."""
    qualifier, _, name = column.replace('"', "").replace("`", "").rpartition(".")
    return qualifier, name


def _condition(tree: exp.Select, qualifier: str, name: str) -> tuple[exp.Join, exp.EQ, exp.Column, exp.Column] | None:
    """The inner join of `tree` whose ON equates `qualifier.name` with another table's column: (the join, the
    equality, that column reference, the other side)."""
    for join in tree.args.get("joins") or []:
        on = join.args.get("on")
        if not isinstance(on, exp.Expr) or (join.side or "") or (join.kind or "").upper() not in ("", "INNER"):
            continue
        for equal in on.find_all(exp.EQ):
            left, right = equal.left, equal.right
            if not (isinstance(left, exp.Column) and isinstance(right, exp.Column) and left.table and right.table):
                continue
            for missing, other in ((left, right), (right, left)):
                named = missing.table.upper() == qualifier.upper() and missing.name.upper() == name.upper()
                if named and other.table.upper() != qualifier.upper():
                    return join, equal, missing, other
    return None


def _covers(bridge: str, pairs: list[tuple[str, str]], cards: Mapping[str, dict[str, Any]]) -> bool:
    """The link's columns of `bridge` cover its primary key: each row of the other table matches one at most."""
    key = {str(k).upper() for k in (cards.get(bridge) or {}).get("primary_key") or []}
    return bool(pairs) and bool(key) and key <= {b.upper() for _, b in pairs}
