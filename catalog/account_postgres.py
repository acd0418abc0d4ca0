"""PostgreSQL: what the current role may do beyond reading, from pg_roles, predefined-role membership and privileges.

Write privileges are checked on the relations analysis would read (those the role may SELECT, outside the system
schemas), at most RELATIONS_CHECKED of them, so a catalog of any size is checked in one bounded query.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from catalog.account_capabilities import (
    ACCOUNT_ADMIN,
    CREATE_DATABASES,
    FILE_WRITES,
    SCHEMA_CHANGES,
    SERVER_PROGRAMS,
    SUPERUSER,
    TABLE_WRITES,
)

RELATIONS_CHECKED = 10_000
NAMED = 3

_ROLE = """
    SELECT r.rolsuper, r.rolcreaterole, r.rolcreatedb,
           COALESCE(pg_has_role(current_user, to_regrole('pg_write_server_files')::oid, 'MEMBER'), false),
           COALESCE(pg_has_role(current_user, to_regrole('pg_execute_server_program')::oid, 'MEMBER'), false),
           COALESCE(pg_has_role(current_user, to_regrole('pg_write_all_data')::oid, 'MEMBER'), false),
           has_database_privilege(current_database(), 'CREATE')
    FROM pg_roles r WHERE r.rolname = current_user
"""
_RELATIONS = """
    SELECT rel.nspname || '.' || rel.relname,
           array_remove(ARRAY[
               CASE WHEN has_any_column_privilege(rel.oid, 'INSERT') THEN 'INSERT' END,
               CASE WHEN has_any_column_privilege(rel.oid, 'UPDATE') THEN 'UPDATE' END,
               CASE WHEN has_table_privilege(rel.oid, 'DELETE') THEN 'DELETE' END,
               CASE WHEN has_table_privilege(rel.oid, 'TRUNCATE') THEN 'TRUNCATE' END], NULL),
           pg_has_role(rel.relowner, 'USAGE')
    FROM (
        SELECT c.oid, c.relname, c.relowner, n.nspname
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
          AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
          AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')
        ORDER BY n.nspname, c.relname
        LIMIT :bound
    ) rel
"""
_CREATE_IN = """
    SELECT nspname FROM pg_namespace
    WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%'
      AND has_schema_privilege(oid, 'CREATE')
    ORDER BY nspname
"""


def _some(names: list[str]) -> str:
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")


def postgres_capabilities(conn: Connection) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    row = conn.execute(text(_ROLE)).one()
    superuser, create_role, create_db, write_files, programs, write_all, create_schema = (bool(v) for v in row)
    if superuser:
        found[SUPERUSER] = ["rolsuper"]
    if write_files:
        found[FILE_WRITES] = ["member of pg_write_server_files" if not superuser else "COPY ... TO a server file"]
    if programs:
        found[SERVER_PROGRAMS] = ["member of pg_execute_server_program" if not superuser else "COPY ... TO PROGRAM"]
    if create_role:
        found[ACCOUNT_ADMIN] = ["rolcreaterole"]
    if create_db:
        found[CREATE_DATABASES] = ["rolcreatedb"]
    if write_all and not superuser:
        found[TABLE_WRITES] = ["member of pg_write_all_data"]

    writable: dict[str, list[str]] = {}
    owned: list[str] = []
    for name, privileges, owns in conn.execute(text(_RELATIONS), {"bound": RELATIONS_CHECKED}):
        if privileges:
            writable.setdefault(", ".join(privileges), []).append(str(name))
        if owns:
            owned.append(str(name))
    for privileges, names in writable.items():
        found.setdefault(TABLE_WRITES, []).append(f"{privileges} on {_some(names)}")
    schemas = [str(r[0]) for r in conn.execute(text(_CREATE_IN))]
    if create_schema:
        found.setdefault(SCHEMA_CHANGES, []).append("CREATE on the database")
    if schemas:
        found.setdefault(SCHEMA_CHANGES, []).append(f"CREATE in schema {_some(schemas)}")
    if owned:
        found.setdefault(SCHEMA_CHANGES, []).append(f"owns {_some(owned)}")
    return found
