"""Row filters and column masks enforced in the statement that runs (SPEC §6, §7): a deterministic rewrite.

Every reference to a table (or view) that has a row filter or a masked column for the asking user, wherever it
stands (FROM, joins, subqueries, CTE bodies, set operations, lateral and correlated subqueries), is replaced by
`(SELECT <columns> FROM schema.table AS ts_r WHERE <filter>) AS <the alias or name the query used>`, so the rest of
the query reads only the rows the user may see and the masked values (`workers.sql.column_masks`). The inner read
is schema-qualified (no CTE can stand in for it), its filter's columns are qualified with `ts_r` (a missing column
fails instead of binding to an outer query), and `{user.ATTR}` values are bound parameters; on MariaDB/MySQL its
text comparisons are exact (`workers.sql.exact_compare`). A missing attribute makes the predicate that uses it match
nothing. A `hash` mask binds the installation's padded mask keys as parameters too; the statement shown and stored
keeps only their placeholders. A row identifier (`rowid`, `ctid`, ...) on a replaced table is refused
(`workers.sql.pseudo_columns`). A view that reads a filtered or masked table is read through its own
definition, rewritten the same way (`workers.sql.view_inlining`; a column hidden behind it reads as NULL there, so
the definition still runs); a view whose definition cannot be read is refused. The rewritten text is parsed again
and must read exactly the tables it was built to read.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlglot
from sqlalchemy import Connection, Engine, String, inspect, text
from sqlalchemy.exc import NoSuchTableError, SQLAlchemyError
from sqlglot import exp
from sqlglot.errors import SqlglotError

from catalog.sql_tables import TableName, table_name, table_nodes
from catalog.view_definitions import view_definition
from catalog.view_reads import MAX_VIEW_DEPTH, NameRefused, Resolved, resolve
from core.access.data_policy import RowFilter
from core.access.mask_key import MaskKey
from core.access.permissions import Principal
from core.access.row_predicates import MaskKind, PredicateError, marker_index, parse_predicate
from workers.sql.column_masks import KeyBinding, KeyParameters, MaskKeyUnavailable, masked_value
from workers.sql.engines import family_of
from workers.sql.exact_compare import exact_like_on_sqlite, exact_text_comparisons
from workers.sql.guard import CheckedQuery
from workers.sql.masked_use import MaskedReference, masked_outputs, masked_use_refusal
from workers.sql.pseudo_columns import PolicedReference, pseudo_column_refusal
from workers.sql.view_inlining import inlined

log = logging.getLogger(__name__)

INNER_ALIAS = "ts_r"
_KEPT_TABLE_ARGS = frozenset({"this", "db", "catalog", "alias", "joins", "laterals"})
#: What the clauses a derived table cannot carry are called in SQL.
_CLAUSES = {"sample": "TABLESAMPLE", "hints": "index hints", "indexed": "INDEXED BY", "partition": "PARTITION"}
_DEFAULT_SCHEMA = {"postgresql": "SELECT current_schema()", "mysql": "SELECT DATABASE()"}


class PolicyRefused(Exception):
    """The query cannot be run with the user's row filters and masks; `str(exc)` is safe to show."""


class PolicyDenied(PolicyRefused):
    """The query asks for what the user's masks keep from them (it computes with a masked column)."""


@dataclass
class PolicedQuery:
    """The statement to run for a user with row filters or masks: text in the driver's parameter style when
    `params` is not None, and what was applied, for the user and the audit. `mask_key`: the key a `hash` mask in
    it uses, for the executor (SQLite's `ts_mask_hash`, and keeping the key out of error messages)."""

    sql: str
    params: dict[str, str] | None
    applied: list[str] = field(default_factory=list)
    mask_key: MaskKey | None = None

    def note(self) -> str:
        return "; ".join(self.applied)


@dataclass
class _View:
    definition: exp.Query
    columns: list[str]


@dataclass
class _Table:
    resolved: Resolved
    schema: str  # the schema as the engine names it (the default schema's real name)
    columns: list[str]
    row_filter: RowFilter | None
    masks: dict[str, MaskKind]
    text_columns: frozenset[str] = frozenset()


def apply_data_policies(
    engine: Engine,
    principal: Principal,
    database: str,
    checked: CheckedQuery,
    *,
    mask_key: Callable[[], MaskKey] | None = None,
) -> PolicedQuery | None:
    """The statement rewritten for `principal`'s row filters and masks on `database`, or None when none applies.
    `mask_key` gives the installation's key (`mask_key.mask_key`); it is asked only when a `hash` mask applies,
    and without one such a query is refused."""
    if not principal.has_data_policies(database):
        return None
    try:
        with engine.connect() as conn:
            rewrite = _Rewrite(conn, family_of(engine), principal, database, checked, mask_key)
            result = rewrite.run()
            conn.rollback()
    except NameRefused as exc:
        raise PolicyRefused(str(exc)) from exc
    except SQLAlchemyError as exc:
        log.warning("row filters: cannot read the tables of %s: %s", database, exc)
        raise PolicyRefused("refused: the row filters that apply to you could not be checked; try again") from exc
    return result


class _Rewrite:
    def __init__(
        self,
        conn: Connection,
        family: str,
        principal: Principal,
        database: str,
        checked: CheckedQuery,
        mask_key: Callable[[], MaskKey] | None,
    ):
        self.conn, self.family, self.principal, self.database = conn, family, principal, database
        self.dialect = checked.dialect
        self.checked = checked
        self.token = f"tsp{secrets.token_hex(4)}"
        self.params: dict[str, str] = {}
        self.value_placeholders: set[str] = set()
        self.key_binding = KeyBinding(mask_key, family, database, self._placeholder)
        self.applied: list[str] = []
        self.tables: dict[TableName, _Table | _View | None] = {}
        self.expected: Counter[tuple[str, str | None]] = Counter()
        self._default_schema: str | None = None

    def run(self) -> PolicedQuery | None:
        statement = self.checked.statement.copy()
        self._refuse_pseudo_columns(statement)
        self._refuse_masked_use(statement, None, depth=0)
        if not self._rewrite(statement, in_view=False, depth=0):
            return None
        sql = statement.sql(dialect=self.dialect, comments=False)
        self._verify(sql)
        return PolicedQuery(*self._bind(sql), applied=self.applied, mask_key=self.key_binding.key)

    def _refuse_pseudo_columns(self, statement: exp.Expr) -> None:
        references = []
        for node in table_nodes(statement, self.dialect):
            policed = self._policed(table_name(node))
            if policed is not None:
                references.append(PolicedReference(node, _alias(node).name, policed.columns, table_name(node).written))
        refusal = pseudo_column_refusal(statement, self.family, references)
        if refusal is not None:
            raise PolicyRefused(refusal)

    def _refuse_masked_use(self, tree: exp.Expr, view: TableName | None, *, depth: int) -> dict[str, str]:
        """Refuse a statement (or view definition) that computes with a masked column (`workers.sql.masked_use`);
        the masked columns a view's definition reads as they are, by its column names."""
        references = []
        for node in table_nodes(tree, self.dialect):
            name = table_name(node)
            policed = self._policed(name)
            masks: dict[str, str]
            if isinstance(policed, _Table):
                masks = {c.casefold(): k for c, k in policed.masks.items() if k != "hide"}
            elif isinstance(policed, _View):
                if depth >= MAX_VIEW_DEPTH:
                    raise PolicyRefused(_view_refused(name))
                masks = self._refuse_masked_use(policed.definition, name, depth=depth + 1)
            else:
                continue
            references.append(MaskedReference(node, _alias(node).name, masks, name.written))
        refusal = masked_use_refusal(tree, references, view.written if view is not None else None)
        if refusal is not None:
            raise PolicyDenied(refusal)
        if view is None or not isinstance(tree, exp.Query):
            return {}
        found = self.tables.get(view)
        return masked_outputs(tree, found.columns, references) if isinstance(found, _View) else {}

    def _rewrite(self, tree: exp.Expr, *, in_view: bool, depth: int) -> bool:
        """Replace every policed table (and view with policed tables behind it) that `tree` reads."""
        changed = False
        for node in table_nodes(tree, self.dialect):
            policed = self._policed(table_name(node))
            if policed is None:
                self.expected[_key(table_name(node))] += 1
                continue
            self._refuse_clauses(node)
            if isinstance(policed, _View):
                if depth >= MAX_VIEW_DEPTH:
                    raise PolicyRefused(_view_refused(table_name(node)))
                definition = policed.definition.copy()
                self._rewrite(definition, in_view=True, depth=depth + 1)
                replacement = inlined(definition, policed.columns, _alias(node))
            else:
                replacement = self._subquery(node, policed, in_view=in_view)
                self.expected[(policed.resolved.name.casefold(), policed.schema.casefold())] += 1
            for key in ("joins", "laterals"):  # a parenthesised join hangs its joins on its first table
                if node.args.get(key):
                    replacement.set(key, node.args[key])
            node.replace(replacement)
            changed = True
        return changed

    # --- which tables, and what applies ---------------------------------------------------------------------------

    def _policed(self, name: TableName) -> _Table | _View | None:
        if name in self.tables:
            return self.tables[name]
        resolved = resolve(self.conn, self.family, name)
        found: _Table | _View | None = None
        if resolved.view_reads and any(self._restricted(read, schema) for schema, read in resolved.view_reads):
            found = self._view(name, resolved)
        elif self._restricted(resolved.name, resolved.schema):
            found = self._table(name, resolved)
        self.tables[name] = found
        return found

    def _view(self, name: TableName, resolved: Resolved) -> _View:
        if self._restricted(resolved.name, resolved.schema):  # filtered itself, and over filtered tables
            raise PolicyRefused(_view_refused(name))
        schema = resolved.schema if resolved.schema is not None else self._default()
        definition = view_definition(self.conn, self.family, schema, resolved.name, self.dialect)
        columns = self._columns(resolved.name, schema)
        if definition is None or not columns:
            raise PolicyRefused(_view_refused(name))
        return _View(definition, columns)

    def _columns(self, table: str, schema: str) -> list[str]:
        return [name for name, _text in self._typed_columns(table, schema)]

    def _typed_columns(self, table: str, schema: str) -> list[tuple[str, bool]]:
        """The table's columns, each with whether it holds text (a string type)."""
        try:
            found = inspect(self.conn).get_columns(table, schema=schema)
        except NoSuchTableError:
            return []
        return [(str(c["name"]), isinstance(c["type"], String)) for c in found]

    def _restricted(self, table: str, schema: str | None) -> bool:
        return self.principal.row_filter(self.database, table, schema) is not None or self.principal.may_mask(
            self.database, table, schema
        )

    def _table(self, name: TableName, resolved: Resolved) -> _Table:
        schema = resolved.schema if resolved.schema is not None else self._default()
        typed = self._typed_columns(resolved.name, schema)
        columns = [column for column, _text in typed]
        if not columns:
            raise PolicyRefused(f"refused: there is no table {name.written}; find tables with search_tables")
        row_filter = self.principal.row_filter(self.database, resolved.name, resolved.schema)
        masks = dict(self.principal.column_masks(self.database, resolved.name, columns, resolved.schema))
        shown = resolved.name if resolved.schema is None else f"{resolved.schema}.{resolved.name}"
        if row_filter is not None:
            self.applied.append(f"rows of {shown} filtered ({row_filter.describe()})")
        for column, kind in masks.items():
            if kind != "hide":  # a hidden column does not exist for this user, not even in this note
                self.applied.append(f"{shown}.{column} {'shown as NULL' if kind == 'null' else kind + 'ed'}")
        return _Table(resolved, schema, columns, row_filter, masks, frozenset(c for c, text_ in typed if text_))

    def _default(self) -> str:
        if self._default_schema is None:
            query = _DEFAULT_SCHEMA.get(self.family)
            self._default_schema = str(self.conn.execute(text(query)).scalar_one()) if query else "main"
        return self._default_schema

    # --- building the subquery ------------------------------------------------------------------------------------

    def _refuse_clauses(self, node: exp.Table) -> None:
        extra = sorted(k for k, v in node.args.items() if v and k not in _KEPT_TABLE_ARGS)
        if extra:
            raise PolicyRefused(
                f"refused: {', '.join(_CLAUSES.get(k, k.upper()) for k in extra)} cannot be used on "
                f"{table_name(node).written}, which is filtered or masked for you; write the query without it"
            )

    def _subquery(self, node: exp.Table, table: _Table, *, in_view: bool) -> exp.Subquery:
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
        return exp.Subquery(this=select, alias=_alias(node))

    def _key_parameters(self) -> KeyParameters | None:
        try:
            return self.key_binding.parameters()
        except MaskKeyUnavailable as exc:
            raise PolicyRefused(str(exc)) from exc

    def _condition(self, table: _Table, row_filter: RowFilter) -> exp.Expr:
        alternatives: list[exp.Expr] = []
        for predicates in row_filter.alternatives:
            parts = [self._predicate(table, p) for p in predicates]
            alternatives.append(exp.and_(*[exp.Paren(this=p) for p in parts]) if len(parts) > 1 else parts[0])
        if not alternatives:
            return _nothing()
        if len(alternatives) == 1:
            return alternatives[0]
        return exp.or_(*[exp.Paren(this=a) for a in alternatives])

    def _predicate(self, table: _Table, text_: str) -> exp.Expr:
        try:
            predicate = parse_predicate(text_, self.dialect)
        except PredicateError as exc:
            log.error("row filter %r does not parse on %s: %s", text_, self.database, exc)
            raise PolicyRefused(_config_problem(table)) from exc
        expression = predicate.expression.copy()
        for column in list(expression.find_all(exp.Column)):
            index = marker_index(column.name)
            if index is None:
                column.replace(_ref(self._column(table, column, text_)))
                continue
            values = self._values(predicate.attributes[index], index in predicate.lists)
            if values is None:
                return _nothing()
            placeholders = [self._placeholder(v) for v in values]
            self.value_placeholders.update(p.name for p in placeholders)
            parent = column.parent
            if index in predicate.lists and isinstance(parent, exp.In):
                parent.set("expressions", placeholders)
            else:
                column.replace(placeholders[0])
        if self.family == "mysql":
            return exact_text_comparisons(expression, INNER_ALIAS, table.text_columns, self.value_placeholders)
        if self.family == "sqlite":
            return exact_like_on_sqlite(expression)
        return expression

    def _column(self, table: _Table, column: exp.Column, text_: str) -> str:
        name = column.name
        if name in table.columns:
            return name
        folded = [c for c in table.columns if c.casefold() == name.casefold()]
        if len(folded) == 1:
            return folded[0]
        log.error("row filter %r on %s names column %s, which the table lacks", text_, self.database, name)
        raise PolicyRefused(_config_problem(table))

    def _values(self, attribute: str, is_list: bool) -> list[str] | None:
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

    def _placeholder(self, value: str) -> exp.Column:
        name = f"{self.token}_{len(self.params)}"
        self.params[name] = value
        return exp.column(name)

    # --- checking and binding the text ----------------------------------------------------------------------------

    def _verify(self, sql: str) -> None:
        """The rewritten text must read exactly the tables it was built to read (no reference lost or gained)."""
        try:
            reparsed = sqlglot.parse_one(sql, read=self.dialect)
            found = Counter(_key(table_name(n)) for n in table_nodes(reparsed, self.dialect))
        except (SqlglotError, RecursionError, ValueError) as exc:
            log.error("row filters: the rewritten statement does not parse: %s", exc)
            raise PolicyRefused("refused: this query cannot be run with the row filters that apply to you") from exc
        if found != self.expected:
            log.error("row filters: the rewritten statement reads %s, expected %s", dict(found), dict(self.expected))
            raise PolicyRefused("refused: this query cannot be run with the row filters that apply to you")

    def _bind(self, sql: str) -> tuple[str, dict[str, str] | None]:
        if not self.params:
            return sql, None
        if self.token.casefold() in self.checked.sql.casefold():
            raise PolicyRefused("refused: this query cannot be run with the row filters that apply to you")
        pattern = re.compile(rf"\b({self.token}_\d+)\b")
        if self.family == "sqlite":
            return pattern.sub(r":\1", sql), dict(self.params)
        return pattern.sub(r"%(\1)s", sql.replace("%", "%%")), dict(self.params)


def _alias(node: exp.Table) -> exp.TableAlias:
    """The alias the query gave the table, or its name as written (so `ORD_MST.col` still names its columns)."""
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias):
        return alias.copy()
    written = node.this
    return exp.TableAlias(this=exp.to_identifier(written.name, quoted=bool(written.args.get("quoted"))))


def _view_refused(name: TableName) -> str:
    return (
        f"refused: view {name.written} reads data that is filtered or masked for you and cannot be read with "
        "your filters; query the tables it reads instead"
    )


def _key(name: TableName) -> tuple[str, str | None]:
    return name.name.casefold(), name.schema.casefold() if name.schema else None


def _ref(column: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(column, quoted=True), table=exp.to_identifier(INNER_ALIAS))


def _nothing() -> exp.Expr:
    return exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(0))


def _config_problem(table: _Table) -> str:
    return (
        f"refused: the row filter for table {table.resolved.name} cannot be applied (a configuration problem); "
        "tell the user to ask the operator to check tablescout.yaml"
    )
