"""Which base-table columns each column of a view is computed from, so that a column mask on a base column covers
the view columns computed from it (SPEC §6; `core.cards.card_policies`).

A view's definition is qualified against the columns of the tables it reads and each of its output columns is
followed (sqlglot's lineage) through CTEs, subqueries and set operations down to the table columns it reads; a column
read from another view is followed through that view's own lineage. The result, per view column in the view's own
order, is a list of (schema, table, column), the default schema as None; a column computed from no column
(`COUNT(*)`, a constant) has an empty list. None for the whole view when its definition cannot be followed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import Node, lineage
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import build_scope
from sqlglot.schema import MappingSchema

from catalog.connectors.base import Connector, TableInfo

#: (schema, table, column); schema None for the source's default schema.
BaseColumn = tuple[str | None, str, str]
#: Table (schema, name) → its columns, for every table and view the definition may read.
Columns = Mapping[tuple[str | None, str], Sequence[str]]
#: Views are followed through views behind them this deep.
MAX_DEPTH = 16


def direct_lineage(
    definition: exp.Query, columns: Sequence[str], tables: Columns, dialect: str
) -> list[list[BaseColumn]] | None:
    """For each view column (`columns`, in the view's order), the columns of tables or views it is computed from,
    named as `tables` names them; None when the definition cannot be followed or does not match the view's
    columns."""
    found_schema, names = _schema(tables)
    if found_schema is None:
        return None
    case_sensitive = dialect == "postgres"  # quoted names keep their case, others fold to lower case
    tree = definition.copy()
    for identifier in tree.find_all(exp.Identifier) if not case_sensitive else ():
        identifier.set("quoted", False)  # SQLite and MariaDB compare these names without regard to case
    for table in list(tree.find_all(exp.Table)):
        if not table.alias:  # columns qualified by a quoted table name must find it by that very name
            quoted = bool(table.this.args.get("quoted")) if isinstance(table.this, exp.Identifier) else False
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name, quoted=quoted)))
    try:
        schema = MappingSchema(found_schema, dialect=dialect, normalize=not case_sensitive)
        qualified = qualify(tree, schema=schema, dialect=dialect, validate_qualify_columns=False, identify=False)
        scope = build_scope(qualified)
        if scope is None or not isinstance(qualified, exp.Query):
            return None
        outputs = [select.alias_or_name for select in _first_branch(qualified).selects]
        if len(outputs) != len(columns) or len(set(outputs)) != len(outputs):
            return None
        nodes = lineage(None, qualified, schema=schema, dialect=dialect, scope=scope, copy=False)
    except (SqlglotError, RecursionError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(nodes, dict):
        return None
    found: list[list[BaseColumn]] = []
    for output in outputs:
        node = nodes.get(output)
        if node is None:
            return None
        leaves = _leaves(node, names, dialect)
        if leaves is None:
            return None
        found.append(leaves)
    return found


def _first_branch(query: exp.Query) -> exp.Query:
    while isinstance(query, exp.SetOperation):
        query = query.this
    return query


#: (schema, table) folded → the table as `Columns` names it, and its columns folded → as named.
_Names = Mapping[tuple[str, str], tuple[tuple[str | None, str], Mapping[str, str]]]


def _schema(tables: Columns) -> tuple[dict[str, object] | None, _Names]:
    """The schema sqlglot qualifies against, and a lookup from folded names to the names as given."""
    names = {
        ((s or "").casefold(), t.casefold()): ((s, t), {c.casefold(): c for c in cols})
        for (s, t), cols in tables.items()
    }
    if all(s is None for s, _ in tables):
        return {t: {c: "UNKNOWN" for c in cols} for (_, t), cols in tables.items()}, names
    if any(s is None for s, _ in tables):
        return None, names  # a definition reading the default schema and named schemas: not followed
    nested: dict[str, object] = {}
    for (s, t), cols in tables.items():
        assert s is not None
        nested.setdefault(s, {})[t] = {c: "UNKNOWN" for c in cols}  # type: ignore[index]
    return nested, names


def _leaves(node: Node, names: _Names, dialect: str) -> list[BaseColumn] | None:
    found: list[BaseColumn] = []
    for item in node.walk():
        if item.downstream:
            continue
        source = item.source
        if not isinstance(source, exp.Table):
            continue  # computed from no column (COUNT(*), a constant)
        table = names.get(((source.db or "").casefold(), source.name.casefold()))
        if table is None:
            return None  # a table the view's recorded reads do not name
        try:
            column = exp.to_column(item.name, dialect=dialect).name
        except SqlglotError:
            return None
        (schema, name), columns = table
        real = columns.get(column.casefold())
        if real is None:
            return None  # a column the table does not have (or `*`)
        entry = (schema, name, real)
        if entry not in found:
            found.append(entry)
    return found


def resolve_views(
    direct: Mapping[tuple[str | None, str], list[list[BaseColumn]] | None],
    columns: Columns,
) -> dict[tuple[str | None, str], dict[str, list[list[str | None]]] | None]:
    """Each view's lineage (`direct`, per view column in order) followed through views behind it down to tables, with
    column names as `columns` writes them: view → {view column: [[schema, table, column], ...]}, or None."""
    folded = {key: {c.casefold(): c for c in cols} for key, cols in columns.items()}
    resolved: dict[tuple[str | None, str], dict[str, list[list[str | None]]] | None] = {}

    def base(entry: BaseColumn, depth: int) -> list[BaseColumn] | None:
        schema, table, column = entry
        key = (schema, table)
        real = folded.get(key, {}).get(column.casefold())
        if real is None:
            return None
        if key not in direct:
            return [(schema, table, real)]
        if depth >= MAX_DEPTH:
            return None
        lineage_of = direct[key]
        if lineage_of is None:
            return None
        position = list(columns[key]).index(real)
        found: list[BaseColumn] = []
        for inner in lineage_of[position]:
            behind = base(inner, depth + 1)
            if behind is None:
                return None
            found.extend(b for b in behind if b not in found)
        return found

    for view, per_column in direct.items():
        if per_column is None:
            resolved[view] = None
            continue
        mapping: dict[str, list[list[str | None]]] | None = {}
        for name, sources in zip(columns[view], per_column, strict=True):
            followed: list[BaseColumn] = []
            for entry in sources:
                behind = base(entry, 1)
                if behind is None:
                    mapping = None
                    break
                followed.extend(b for b in behind if b not in followed)
            if mapping is None:
                break
            mapping[name] = [[s, t, c] for s, t, c in followed]
        resolved[view] = mapping
    return resolved


def column_reads_of(
    connector: Connector,
    infos: Sequence[TableInfo],
    reads_of: Mapping[str, Sequence[tuple[str | None, str]] | None],
) -> dict[str, dict[str, list[list[str | None]]] | None]:
    """Per view of `infos` (by its qualified name), the base columns each of its columns is computed from, or None
    where they cannot be followed (`reads_of`: what each view reads, as analysis recorded it)."""
    dialect = connector.sqlglot_dialect
    views = [info for info in infos if info.ref.kind == "view"]
    if not views:
        return {}
    named = {((i.ref.schema or "").casefold(), i.ref.name.casefold()): i for i in infos}
    columns = {(i.ref.schema, i.ref.name): [c.name for c in i.columns] for i in infos}
    direct: dict[tuple[str | None, str], list[list[BaseColumn]] | None] = {}
    for view in views:
        key = (view.ref.schema, view.ref.name)
        reads = reads_of.get(view.ref.qualified)
        read_infos = [named.get(((s or "").casefold(), n.casefold())) for s, n in reads or []]
        definition = connector.view_definition(view.ref) if dialect and reads is not None else None
        if definition is None or dialect is None or any(i is None for i in read_infos):
            direct[key] = None
            continue
        tables = {(i.ref.schema, i.ref.name): columns[(i.ref.schema, i.ref.name)] for i in read_infos if i}
        direct[key] = direct_lineage(definition, columns[key], tables, dialect)
    return {f"{s}.{n}" if s else n: found for (s, n), found in resolve_views(direct, columns).items()}
