"""Introspection shared by every engine, through `sqlalchemy.inspect`: tables, columns, keys and comments."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from sqlalchemy.engine import Dialect, Inspector

from catalog.connectors.base import ColumnInfo, ForeignKeyInfo, TableInfo, TableRef
from catalog.connectors.families import type_facts

#: Schemas that belong to the engine itself, compared lower-cased: PostgreSQL, MariaDB/MySQL, MSSQL (including its
#: fixed database-role schemas) and Oracle basics. A dialect that needs more overrides the connector's `_schemas`.
SYSTEM_SCHEMAS = frozenset(
    {
        "information_schema",
        "pg_catalog",
        "pg_toast",
        "mysql",
        "performance_schema",
        "sys",
        "system",
        "guest",
        "db_owner",
        "db_accessadmin",
        "db_securityadmin",
        "db_ddladmin",
        "db_backupoperator",
        "db_datareader",
        "db_datawriter",
        "db_denydatareader",
        "db_denydatawriter",
    }
)
SYSTEM_SCHEMA_PREFIXES = ("pg_temp_", "pg_toast_temp_")


def is_system_schema(name: str) -> bool:
    lowered = name.lower()
    return lowered in SYSTEM_SCHEMAS or lowered.startswith(SYSTEM_SCHEMA_PREFIXES)


def user_schemas(inspector: Inspector) -> list[str | None]:
    """Every schema the account sees minus the engine's own, the default one given as None (where there is one: a
    MySQL URL without a database has none)."""
    default = inspector.default_schema_name
    found: list[str | None] = [None] if default is not None else []
    for name in inspector.get_schema_names():
        if name != default and not is_system_schema(name):
            found.append(name)
    return found


def list_refs(inspector: Inspector, schemas: Iterable[str | None]) -> list[TableRef]:
    """Tables then views of each schema, sorted by schema and name so the order is stable across runs."""
    refs: list[TableRef] = []
    for schema in schemas:
        refs += [TableRef(schema, name, "table") for name in inspector.get_table_names(schema=schema)]
        views = set(inspector.get_view_names(schema=schema))
        with contextlib.suppress(NotImplementedError):  # only some dialects know materialized views
            views |= set(inspector.get_materialized_view_names(schema=schema))
        refs += [TableRef(schema, name, "view") for name in sorted(views)]
    return sorted(refs, key=lambda r: (r.schema or "", r.name, r.kind))


def read_columns(inspector: Inspector, ref: TableRef, dialect: Dialect) -> tuple[ColumnInfo, ...]:
    columns = []
    for col in inspector.get_columns(ref.name, schema=ref.schema):
        data_type, family, max_length = type_facts(col["type"], dialect)
        columns.append(
            ColumnInfo(
                name=col["name"],
                data_type=data_type,
                family=family,
                nullable=bool(col.get("nullable", True)),
                comment=col.get("comment") or None,
                max_length=max_length,
            )
        )
    return tuple(columns)


def _foreign_keys(inspector: Inspector, ref: TableRef) -> tuple[ForeignKeyInfo, ...]:
    default = inspector.default_schema_name
    found = []
    for fk in inspector.get_foreign_keys(ref.name, schema=ref.schema):
        ref_schema = fk.get("referred_schema")
        found.append(
            ForeignKeyInfo(
                columns=tuple(fk["constrained_columns"]),
                # A key into the default schema reads the same however the dialect reports it.
                ref_schema=None if ref_schema == default else ref_schema,
                ref_table=fk["referred_table"],
                ref_columns=tuple(fk["referred_columns"]),
            )
        )
    return tuple(found)


def _unique_sets(
    inspector: Inspector, ref: TableRef, primary_key: tuple[str, ...], sqlite: bool
) -> tuple[tuple[str, ...], ...]:
    """Unique constraints and plain unique indexes; partial or expression indexes do not make a column unique.

    SQLite reads unique constraints by parsing the table's SQL, which takes milliseconds on a wide table; every such
    constraint has an automatic index, so a table whose only automatic index is its primary key's has none to read.
    """
    found: list[tuple[str, ...]] = []
    indexes = inspector.get_indexes(ref.name, schema=ref.schema, **({"include_auto_indexes": True} if sqlite else {}))
    automatic = [ix for ix in indexes if sqlite and str(ix.get("name") or "").startswith("sqlite_autoindex")]
    if not sqlite or any(tuple(ix["column_names"]) != primary_key for ix in automatic):
        for uc in inspector.get_unique_constraints(ref.name, schema=ref.schema):
            found.append(tuple(uc["column_names"]))
    for ix in indexes:
        if ix in automatic:
            continue
        options = ix.get("dialect_options", {})
        names = ix["column_names"]
        if ix["unique"] and all(names) and not any(k.endswith("_where") for k in options):
            found.append(tuple(str(n) for n in names))
    unique: list[tuple[str, ...]] = []
    for cols in found:
        if cols and cols != primary_key and cols not in unique:
            unique.append(cols)
    return tuple(unique)


def _table_comment(inspector: Inspector, ref: TableRef) -> str | None:
    try:
        return inspector.get_table_comment(ref.name, schema=ref.schema).get("text") or None
    except NotImplementedError:  # the dialect keeps no comments (SQLite)
        return None


def read_table(inspector: Inspector, ref: TableRef, dialect: Dialect) -> TableInfo:
    """What the catalog says about one table or view; statistics and partitions are left to the engine."""
    columns = read_columns(inspector, ref, dialect)
    if ref.kind == "view":
        return TableInfo(ref=ref, columns=columns, comment=_table_comment(inspector, ref))
    primary_key = tuple(inspector.get_pk_constraint(ref.name, schema=ref.schema).get("constrained_columns") or ())
    return TableInfo(
        ref=ref,
        columns=columns,
        primary_key=primary_key,
        foreign_keys=_foreign_keys(inspector, ref),
        unique=_unique_sets(inspector, ref, primary_key, dialect.name == "sqlite"),
        comment=_table_comment(inspector, ref),
    )
