"""Table permissions for SQL (SPEC §6 and §7): every table a query reads, directly or through views, must be allowed.

Names are resolved with the engine's own rules before asking `Principal.may_see`: PostgreSQL folds unquoted names to
lower case and finds unqualified ones on the search_path (`to_regclass`), MariaDB/MySQL's schema is the source's
database, SQLite compares names without regard to case in its `main` schema. The default schema is passed as None,
as the catalog stores it, so SQL checks and search agree. A view is followed through what it reads (PostgreSQL's
dependency catalog, the definitions in information_schema.VIEWS or sqlite_master), recursively, and refused as a
whole when anything behind it is hidden, without naming what.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from catalog.connectors.errors import driver_message
from catalog.sql_tables import TableName
from catalog.view_reads import NameRefused, Resolved, resolve
from core.access.permissions import Principal
from workers.sql.engines import family_of


class AccessDenied(Exception):
    """The principal may not read something the SQL reads; `str(exc)` is safe to show (names only what the user
    wrote)."""


class AccessRefused(Exception):
    """A name the SQL uses is outside what run_sql may read (another database, a system catalog)."""


def check_access(engine: Engine, principal: Principal, database: str, tables: Sequence[TableName]) -> None:
    """Raise AccessDenied or AccessRefused unless `principal` may read every table in `tables` and everything the
    views among them read, in source `database` (reached through `engine`)."""
    if principal.operator or not tables:
        return
    # Names are checked only once resolved: a name as written (`main.ORD_MST`, `public.ORD_MST`) may be the default
    # schema's table, which permission patterns name without a schema.
    family = family_of(engine)
    try:
        with engine.connect() as conn:
            resolved: list[Resolved] = [resolve(conn, family, table) for table in tables]
            conn.rollback()
    except NameRefused as exc:
        raise AccessRefused(str(exc)) from exc
    except SQLAlchemyError as exc:
        raise AccessRefused(f"cannot check the tables the query reads: {driver_message(exc)}") from exc
    for item in resolved:
        if not principal.may_see(database, item.name, item.schema):
            raise AccessDenied(f"no permission: you may not read table {item.written.written}")
        if item.unverifiable:
            raise AccessDenied(
                f"no permission: view {item.written.written} cannot be checked (its definition cannot be read)"
            )
        if item.view_reads is not None and not all(principal.may_see(database, n, s) for s, n in item.view_reads):
            raise AccessDenied(
                f"no permission: view {item.written.written} reads data you may not see; use the tables you may read"
            )
