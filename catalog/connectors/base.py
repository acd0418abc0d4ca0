"""The connector interface: what analysis needs from a source database, whatever its engine.

A connector reads through a read-only session with a per-statement timeout and never scans a large table in
full: sampling is bounded by a row limit using the engine's own means (TABLESAMPLE, rowid or key ranges).
SQLite, MariaDB/MySQL and PostgreSQL implement it; other engines (MSSQL, Oracle, Tibero over ODBC) can too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from sqlglot import exp

TypeFamily = Literal["integer", "decimal", "float", "text", "date", "datetime", "time", "boolean", "binary", "other"]
TableKind = Literal["table", "view"]


@dataclass(frozen=True)
class TableRef:
    """A table or view as the source names it. `schema` is None for the connection's default schema."""

    schema: str | None
    name: str
    kind: TableKind = "table"

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    data_type: str  # as the engine spells it, e.g. "VARCHAR(20)", "NUMERIC(14, 2)"
    family: TypeFamily
    nullable: bool = True
    comment: str | None = None
    max_length: int | None = None


@dataclass(frozen=True)
class ForeignKeyInfo:
    columns: tuple[str, ...]
    ref_schema: str | None
    ref_table: str
    ref_columns: tuple[str, ...]


@dataclass(frozen=True)
class TableInfo:
    """Everything introspection learns about one table without reading its rows."""

    ref: TableRef
    columns: tuple[ColumnInfo, ...]
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKeyInfo, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    comment: str | None = None
    partition_of: str | None = None  # a declared partition's parent table, where the engine has them
    row_estimate: int | None = None  # from the engine's statistics; None when it keeps none
    view_definition_error: str | None = None


@dataclass
class Sample:
    """Rows read for profiling: `rows` holds at most the requested limit; `complete` when they are the whole table."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    complete: bool = False
    method: str = ""


class Connector(Protocol):
    engine: str  # "sqlite", "mariadb", "mysql", "postgresql", ...
    version: str

    def list_tables(self) -> list[TableRef]:
        """Tables and views the account can read, in every schema it can use (system schemas excluded)."""
        ...

    def describe(self, ref: TableRef) -> TableInfo:
        """Columns, keys, constraints, comments and the statistics row estimate of one table."""
        ...

    def exact_count(self, ref: TableRef) -> int:
        """COUNT(*), under the statement timeout; callers use it only for tables estimated small."""
        ...

    def sample(self, ref: TableRef, columns: Sequence[str], limit: int) -> Sample:
        """Up to `limit` rows of `columns`, spread over the table where the engine allows, never a full scan."""
        ...

    def count_present(self, ref: TableRef, column: str, values: Sequence[Any]) -> int:
        """How many of the distinct `values` occur in `column` (a key lookup used for containment checks)."""
        ...

    def view_reads(self, ref: TableRef) -> list[tuple[str | None, str]] | None:
        """What view `ref` reads, through views behind it, as (schema, name) (None: the default schema); [] for a
        table; None when it cannot be followed."""
        ...

    def view_definition(self, ref: TableRef) -> exp.Query | None:
        """The parsed query behind view `ref`; None for a table or when it cannot be read or parsed."""
        ...

    @property
    def sqlglot_dialect(self) -> str | None:
        """sqlglot's name for the source's SQL dialect, None when its view definitions are not read."""
        ...

    def close(self) -> None: ...
