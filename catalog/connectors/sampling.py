"""Pieces every sampling method shares: the seed, the FROM clause, long-value limits and thinning a sample down."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from random import Random
from typing import Any, TypeVar

from sqlalchemy import Connection, Select, TableClause, column, literal_column, table
from sqlalchemy.sql.elements import ColumnClause, ColumnElement

from catalog.connectors.base import TableRef

#: Text values are cut to this many characters in SQL, so a huge TEXT column costs no more than a VARCHAR.
TEXT_CUT = 256
#: Binary values are cut to this many bytes: enough to recognise a file signature, never the whole file.
BINARY_CUT = 64
#: Rows read from each random starting key when sampling in runs: short runs keep the sample spread over the table.
RUN_ROWS = 50
#: Values per `IN (...)` list: under SQLite's historic 999-parameter limit and small enough for any driver.
IN_BATCH = 500

T = TypeVar("T")
Rows = list[tuple[Any, ...]]


def fetch(conn: Connection, statement: Any, params: dict[str, Any] | None = None) -> Rows:
    return [tuple(row) for row in conn.execute(statement, params or {})]


def seed_for(ref: TableRef) -> int:
    """A seed that depends only on the table's name, so re-sampling unchanged data draws the same rows."""
    digest = hashlib.sha256(f"{ref.schema or ''}\x00{ref.name}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF  # fits a signed 32-bit REPEATABLE seed


def rng_for(ref: TableRef) -> Random:
    return Random(seed_for(ref))  # noqa: S311 - sampling, not security


def source(ref: TableRef, columns: Sequence[str] = ()) -> TableClause:
    """The table as a FROM clause; SQLAlchemy quotes every identifier as the dialect requires."""
    return table(ref.name, *(column(name) for name in columns), schema=ref.schema)


def const(value: int) -> ColumnClause[Any]:
    """An integer written into the SQL rather than bound, so cutting many columns adds no parameters."""
    return literal_column(str(int(value)))


def thin(rows: list[T], limit: int, rng: Random) -> list[T]:
    """`limit` of `rows` chosen at random, in their original order."""
    if len(rows) <= limit:
        return rows
    keep = sorted(rng.sample(range(len(rows)), limit))
    return [rows[i] for i in keep]


def batches(values: Sequence[T], size: int = IN_BATCH) -> Iterator[Sequence[T]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def draw_ids(rng: Random, low: int, high: int, count: int, tried: set[int]) -> list[int]:
    """`count` integers of [low, high] not in `tried` (which grows by them), chosen at random."""
    remaining = high - low + 1 - len(tried)
    count = min(count, remaining)
    if count <= 0:
        return []
    if count * 2 >= remaining:
        # Few candidates left: list them rather than draw and retry. `remaining` is small here (see callers' caps).
        pool = [i for i in range(low, high + 1) if i not in tried]
        picked = rng.sample(pool, count)
    else:
        picked = []
        seen: set[int] = set()
        while len(picked) < count:
            candidate = rng.randint(low, high)
            if candidate not in tried and candidate not in seen:
                seen.add(candidate)
                picked.append(candidate)
    tried.update(picked)
    return sorted(picked)


def read_runs(
    conn: Connection, statement: Select[Any], key: ColumnElement[Any], low: int, high: int, wanted: int, rng: Random
) -> Rows:
    """About `wanted` rows as runs of RUN_ROWS in key order, each from a random starting key in [low, high].

    `statement` selects `key` first; each run is an index seek, and runs never overlap because each starts past the
    previous run's last key. Used where keys are integers but may have gaps of any size.
    """
    runs = min(math.ceil(wanted / RUN_ROWS), high - low + 1)
    starts = sorted(rng.sample(range(low, high + 1), runs))
    query = statement.order_by(key).limit(RUN_ROWS)
    rows: Rows = []
    for start in starts:
        first = start if not rows else max(start, int(rows[-1][0]) + 1)
        rows += fetch(conn, query.where(key >= first))
    return rows
