"""Caps on one run of SQL: rows, bytes, time and the server's temporary space (SPEC §7, layer 4)."""

from __future__ import annotations

from dataclasses import dataclass

#: A single value longer than this (characters, or bytes for binary values) is cut, so one huge cell cannot use up
#: the whole byte budget of a result.
MAX_CELL_CHARS = 2_000
#: SQLite's SQLITE_LIMIT_LENGTH on source connections: no string, blob or stored row longer than this is built, so a
#: statement like `SELECT zeroblob(900000000)` fails instead of taking the worker's memory.
SQLITE_MAX_LENGTH = 8_000_000


@dataclass(frozen=True)
class SqlLimits:
    max_rows: int = 200  # N: at most N+1 rows are fetched, the extra one only to know the result was truncated
    max_bytes: int = 64_000  # budget for the returned rows, counting each value by its text length
    timeout_s: float = 30.0  # statement timeout, enforced by the engine and backed by a cancel from the client
    temp_bytes: int = 256 * 1024 * 1024  # temporary files (PostgreSQL) and in-memory temporary tables (MariaDB)
    work_mem_bytes: int = 8 * 1024 * 1024  # PostgreSQL work_mem: memory per sort or hash before it spills

    def __post_init__(self) -> None:
        if self.max_rows < 0:
            raise ValueError("max_rows must not be negative")
        if self.max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if self.temp_bytes < 1024 * 1024 or self.work_mem_bytes < 64 * 1024:
            raise ValueError("temp_bytes must be at least 1 MiB and work_mem_bytes at least 64 KiB")
