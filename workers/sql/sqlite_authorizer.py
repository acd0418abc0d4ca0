"""SQLite's own check of what a statement may do (SPEC §7, layer 3): an authorizer installed while the model's
statement is prepared, which SQLite consults for every table, column, function and action the statement uses.

It allows reading tables, views and CTEs, and calling functions; it denies every other action (writes, DDL, ATTACH,
transactions, savepoints, ANALYZE, and every PRAGMA, so that `PRAGMA hard_heap_limit` and the like, which act on the
whole process, never run). The schema catalog (`sqlite_master`, `sqlite_schema`, `sqlite_stat*`, ...), the
table-valued pragmas (`pragma_table_info`, `pragma_database_list`, ...) and `dbstat` list every table, its columns
and the file's path, so they are read only when the role grants catalog reads, and then only pragmas that read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

Authorizer = Callable[[int, str | None, str | None, str | None, str | None], int]

#: Pragmas a role with catalog reads may use through their table-valued form; all of them only read.
CATALOG_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "database_list",
        "collation_list",
    }
)
#: Functions refused at this layer as well as by the guard: they load code or reach outside the database.
REFUSED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "sqlite_dbpage"})


def is_catalog_table(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith(("sqlite_", "pragma_")) or lowered == "dbstat"


def read_only_authorizer(*, catalog: bool) -> Authorizer:
    """An authorizer for `sqlite3.Connection.set_authorizer` that allows plain reads only."""

    def authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _source: str | None) -> int:
        if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            if arg1 is not None and is_catalog_table(arg1) and not catalog:
                return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            return sqlite3.SQLITE_DENY if (arg2 or "").lower() in REFUSED_FUNCTIONS else sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA:
            return sqlite3.SQLITE_OK if catalog and (arg1 or "").lower() in CATALOG_PRAGMAS else sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_UPDATE and catalog and (arg1 or "").lower() == "sqlite_master":
            return sqlite3.SQLITE_OK  # SQLite reports a table-valued pragma's first use so; nothing is written
        return sqlite3.SQLITE_DENY

    return authorize
