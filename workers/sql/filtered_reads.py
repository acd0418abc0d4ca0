"""The derived table a policed table is replaced by: `(SELECT <columns> FROM schema.table AS ts_r WHERE <filter>)
AS <the alias or name the query used>`, its masked columns computed (`workers.sql.column_masks`), its row filter's
predicates with their columns qualified by `ts_r` and the user's attribute values bound as parameters (exact text
comparisons on MariaDB/MySQL and for LIKE on SQLite, `workers.sql.exact_compare`)."""

from __future__ import annotations

import logging

from sqlglot import exp

from catalog.sql_tables import table_name
from core.access.data_policy import RowFilter
from core.access.permissions import Principal
from core.access.row_predicates import PredicateError, marker_index, parse_predicate
from workers.sql.bound_values import BoundValues
from workers.sql.column_masks import KeyBinding, KeyParameters, MaskKeyUnavailable, masked_value
from workers.sql.exact_compare import exact_like_on_sqlite, exact_text_comparisons
from workers.sql.policed_tables import PolicedTable
from workers.sql.policy_refusals import PolicyRefused, config_problem

log = logging.getLogger(__name__)

INNER_ALIAS = "ts_r"
_KEPT_TABLE_ARGS = frozenset({"this", "db", "catalog", "alias", "joins", "laterals"})
#: What the clauses a derived table cannot carry are called in SQL.
_CLAUSES = {"sample": "TABLESAMPLE", "hints": "index hints", "indexed": "INDEXED BY", "partition": "PARTITION"}


def alias_of(node: exp.Table) -> exp.TableAlias:
    """The alias the query gave the table, or its name as written (so `ORD_MST.col` still names its columns)."""
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias):
        return alias.copy()
    written = node.this
    return exp.TableAlias(this=exp.to_identifier(written.name, quoted=bool(written.args.get("quoted"))))


def refuse_clauses(node: exp.Table) -> None:
    """PolicyRefused when the reference carries a clause a derived table cannot (TABLESAMPLE, index hints, ...)."""
    extra = sorted(k for k, v in node.args.items() if v and k not in _KEPT_TABLE_ARGS)
    if extra:
        raise PolicyRefused(
            f"refused: {', '.join(_CLAUSES.get(k, k.upper()) for k in extra)} cannot be used on "
            f"{table_name(node).written}, which is filtered or masked for you; write the query without it"
        )


class FilteredReads:
    """Builds the derived tables of one rewrite for `principal` on `database`, binding values into `values` and
    mask keys through `key_binding`."""

    def __init__(
        self,
        principal: Principal,
        database: str,
        dialect: str,
        family: str,
        values: BoundValues,
        key_binding: KeyBinding,
    ) -> None:
        self.principal, self.database, self.dialect, self.family = principal, database, dialect, family
        self.values = values
        self.key_binding = key_binding

    def subquery(self, node: exp.Table, table: PolicedTable, *, in_view: bool) -> exp.Subquery:
        """The derived table that replaces `node`. Inside a view's definition (`in_view`) a hidden column stays,
        reading as NULL, so the definition still runs; elsewhere it is left out. PolicyRefused when no column is
        left, or the filter or a hash mask cannot be applied."""
        items: list[exp.Expr] = []
        for column in table.columns:
            kind = table.masks.get(column)
            if kind == "hide" and not in_view:
                continue
            ref = _ref(column)
            if kind is None:
                value: exp.Expr = ref
            elif kind == "hide":  # behind a view the column must exist for the definition; it reads as NULL
                value = exp.Null()
            else:
                value = masked_value(kind, ref, self.family, self._key_parameters() if kind == "hash" else None)
            items.append(exp.alias_(value, exp.to_identifier(column, quoted=True)))
        if not items:
            raise PolicyRefused(f"refused: table {table_name(node).written} has no column you may read")
        source = exp.Table(
            this=exp.to_identifier(table.resolved.name, quoted=True),
            db=exp.to_identifier(table.schema, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(INNER_ALIAS)),
        )
        select = exp.Select(expressions=items).from_(source)
        if table.row_filter is not None:
            select = select.where(self._condition(table, table.row_filter))
        return exp.Subquery(this=select, alias=alias_of(node))

    def _key_parameters(self) -> KeyParameters | None:
        try:
            return self.key_binding.parameters()
        except MaskKeyUnavailable as exc:
            raise PolicyRefused(str(exc)) from exc

    def _condition(self, table: PolicedTable, row_filter: RowFilter) -> exp.Expr:
        alternatives: list[exp.Expr] = []
        for predicates in row_filter.alternatives:
            parts = [self._predicate(table, p) for p in predicates]
            alternatives.append(exp.and_(*[exp.Paren(this=p) for p in parts]) if len(parts) > 1 else parts[0])
        if not alternatives:
            return _nothing()
        if len(alternatives) == 1:
            return alternatives[0]
        return exp.or_(*[exp.Paren(this=a) for a in alternatives])

    def _predicate(self, table: PolicedTable, text_: str) -> exp.Expr:
        try:
            predicate = parse_predicate(text_, self.dialect)
        except PredicateError as exc:
            log.error("row filter %r does not parse on %s: %s", text_, self.database, exc)
            raise PolicyRefused(config_problem(table.resolved.name)) from exc
        expression = predicate.expression.copy()
        for column in list(expression.find_all(exp.Column)):
            index = marker_index(column.name)
            if index is None:
                column.replace(_ref(self._column(table, column, text_)))
                continue
            values = self._attribute_values(predicate.attributes[index], index in predicate.lists)
            if values is None:
                return _nothing()
            placeholders = [self.values.placeholder(v) for v in values]
            self.values.value_placeholders.update(p.name for p in placeholders)
            parent = column.parent
            if index in predicate.lists and isinstance(parent, exp.In):
                parent.set("expressions", placeholders)
            else:
                column.replace(placeholders[0])
        if self.family == "mysql":
            return exact_text_comparisons(expression, INNER_ALIAS, table.text_columns, self.values.value_placeholders)
        if self.family == "sqlite":
            return exact_like_on_sqlite(expression)
        return expression

    def _column(self, table: PolicedTable, column: exp.Column, text_: str) -> str:
        name = column.name
        if name in table.columns:
            return name
        folded = [c for c in table.columns if c.casefold() == name.casefold()]
        if len(folded) == 1:
            return folded[0]
        log.error("row filter %r on %s names column %s, which the table lacks", text_, self.database, name)
        raise PolicyRefused(config_problem(table.resolved.name))

    def _attribute_values(self, attribute: str, is_list: bool) -> list[str] | None:
        """The bound values for `{user.attribute}`; None (the predicate matches nothing) when the user has none."""
        value = self.principal.attribute(attribute)
        if value is None:
            return None
        if isinstance(value, str):
            return [value]
        if is_list or len(value) == 1:
            return list(value)
        log.warning("row filter: attribute %s has several values and is not used with IN; no rows match", attribute)
        return None


def _ref(column: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(column, quoted=True), table=exp.to_identifier(INNER_ALIAS))


def _nothing() -> exp.Expr:
    return exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(0))
