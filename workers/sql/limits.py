"""Caps on one run of SQL: rows, bytes and time (SPEC §7, layer 4)."""

from __future__ import annotations

from dataclasses import dataclass

#: A single value longer than this (characters, or bytes for binary values) is cut, so one huge cell cannot use up
#: the whole byte budget of a result.
MAX_CELL_CHARS = 2_000


@dataclass(frozen=True)
class SqlLimits:
    max_rows: int = 200  # N: at most N+1 rows are fetched, the extra one only to know the result was truncated
    max_bytes: int = 64_000  # budget for the returned rows, counting each value by its text length
    timeout_s: float = 30.0  # statement timeout, enforced by the engine and backed by a cancel from the client

    def __post_init__(self) -> None:
        if self.max_rows < 0:
            raise ValueError("max_rows must not be negative")
        if self.max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
