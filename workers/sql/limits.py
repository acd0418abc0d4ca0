"""Caps on one run of SQL: rows, bytes, time and the server's temporary space (SPEC §7, layer 4)."""

from __future__ import annotations

from dataclasses import dataclass

#: A single value longer than this (characters, or bytes for binary values) is cut, so one huge cell cannot use up
#: the whole byte budget of a result.
MAX_CELL_CHARS = 2_000
#: SQLite's SQLITE_LIMIT_LENGTH on source connections: no string, blob or stored row longer than this is built, so a
#: statement like `SELECT zeroblob(900000000)` fails instead of taking the worker's memory.
SQLITE_MAX_LENGTH = 8_000_000
#: SQLite's hard heap limit for the whole process (`PRAGMA hard_heap_limit`), set by the first source connection:
#: source connections keep their temporary b-trees and sorts in memory, so this caps the temporary space that all
#: SQLite statements of a worker use together (the page caches included); past it a statement fails.
SQLITE_HEAP_LIMIT = 320 * 1024 * 1024
#: MariaDB's max_recursive_iterations for the model's statements: its default (1000) silently cuts a recursive CTE
#: short, so the recursion is bounded by the temporary-space cap and the timeout instead.
MARIADB_RECURSIVE_ITERATIONS = 4_294_967_295


@dataclass(frozen=True)
class SqlLimits:
    max_rows: int = 200  # N: at most N+1 rows are fetched, the extra one only to know the result was truncated
    max_bytes: int = 64_000  # budget for the returned rows, counting each value by its text length
    timeout_s: float = 30.0  # statement timeout, enforced by the engine and backed by a cancel from the client
    # Temporary files (PostgreSQL temp_file_limit) and temporary tables in memory and on disk (MariaDB
    # tmp_table_size and tmp_disk_table_size: GROUP BY, DISTINCT, derived tables, UNION, recursive CTEs).
    temp_bytes: int = 256 * 1024 * 1024
    work_mem_bytes: int = 8 * 1024 * 1024  # PostgreSQL work_mem: memory per sort or hash before it spills
    # MariaDB/MySQL max_join_size: a statement the optimizer expects to examine more rows (row combinations of a
    # join) than this is refused before it runs: cross joins and sorts that would take far longer than the timeout.
    max_examined_rows: int = 10_000_000_000

    def __post_init__(self) -> None:
        if self.max_rows < 0:
            raise ValueError("max_rows must not be negative")
        if self.max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if self.max_examined_rows < 1:
            raise ValueError("max_examined_rows must be positive")
        if self.temp_bytes < 1024 * 1024 or self.work_mem_bytes < 64 * 1024:
            raise ValueError("temp_bytes must be at least 1 MiB and work_mem_bytes at least 64 KiB")
