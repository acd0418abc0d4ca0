"""Which tables and views of a statement the asking user's row filters and column masks apply to, and what applies:
each name resolved once against the source database, a policed table with its columns, filter and masks, a view
over policed tables with its definition, and the note of what was applied for the user and the audit."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, String, inspect, text
from sqlalchemy.exc import NoSuchTableError
from sqlglot import exp

from catalog.sql_tables import TableName
from catalog.view_definitions import view_definition
from catalog.view_reads import Resolved, resolve
from core.access.data_policy import RowFilter
from core.access.permissions import Principal
from core.access.row_predicates import MaskKind
from workers.sql.policy_refusals import PolicyRefused, view_refused

_DEFAULT_SCHEMA = {"postgresql": "SELECT current_schema()", "mysql": "SELECT DATABASE()"}


@dataclass
class PolicedView:
    """A view that reads policed tables: read through its definition, with its column names."""

    definition: exp.Query
    columns: list[str]


@dataclass
class PolicedTable:
    """A table with a row filter or masked columns for the user."""

    resolved: Resolved
    schema: str  # the schema as the engine names it (the default schema's real name)
    columns: list[str]
    row_filter: RowFilter | None
    masks: dict[str, MaskKind]
    text_columns: frozenset[str] = frozenset()


class PolicedTables:
    """The policed tables and views of one rewrite, looked up once per name on `conn`. `applied` lists what
    applies to the tables found so far, in the order found."""

    def __init__(self, conn: Connection, family: str, principal: Principal, database: str, dialect: str) -> None:
        self.conn, self.family, self.principal, self.database, self.dialect = conn, family, principal, database, dialect
        self.applied: list[str] = []
        self.found: dict[TableName, PolicedTable | PolicedView | None] = {}
        self._default_schema: str | None = None

    def policed(self, name: TableName) -> PolicedTable | PolicedView | None:
        """What `name` reads if the user's policies apply to it (None: it is read as it is). PolicyRefused for a
        missing policed table, a policed view, or a view over policed tables whose definition cannot be read."""
        if name in self.found:
            return self.found[name]
        resolved = resolve(self.conn, self.family, name)
        found: PolicedTable | PolicedView | None = None
        if resolved.view_reads and any(self._restricted(read, schema) for schema, read in resolved.view_reads):
            found = self._view(name, resolved)
        elif self._restricted(resolved.name, resolved.schema):
            found = self._table(name, resolved)
        self.found[name] = found
        return found

    def _view(self, name: TableName, resolved: Resolved) -> PolicedView:
        if self._restricted(resolved.name, resolved.schema):  # filtered itself, and over filtered tables
            raise PolicyRefused(view_refused(name))
        schema = resolved.schema if resolved.schema is not None else self._default()
        definition = view_definition(self.conn, self.family, schema, resolved.name, self.dialect)
        columns = self._columns(resolved.name, schema)
        if definition is None or not columns:
            raise PolicyRefused(view_refused(name))
        return PolicedView(definition, columns)

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

    def _table(self, name: TableName, resolved: Resolved) -> PolicedTable:
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
        return PolicedTable(resolved, schema, columns, row_filter, masks, frozenset(c for c, text_ in typed if text_))

    def _default(self) -> str:
        if self._default_schema is None:
            query = _DEFAULT_SCHEMA.get(self.family)
            self._default_schema = str(self.conn.execute(text(query)).scalar_one()) if query else "main"
        return self._default_schema
