"""Capping values on the database side, before a row reaches the worker (SPEC §7, layer 4).

A statement is first described (`SELECT * FROM (statement) LIMIT 0`, which runs nothing but the planner), then run
wrapped so that every value that can be long comes back cut to `MAX_CELL_CHARS + 1` characters (bytes for binary
values): `SELECT left(c0, N), c1, ... FROM (statement) AS q(c0, c1, ...)` on PostgreSQL, the same through a CTE
with a column list on SQLite and MariaDB/MySQL. Values of fixed-size types (numbers, dates, booleans) pass as they
are, so the result keeps its types; the one extra character tells the fetcher the value was cut.
"""

from __future__ import annotations

from collections.abc import Sequence

from workers.sql.limits import MAX_CELL_CHARS

CAP = MAX_CELL_CHARS + 1

#: PostgreSQL type OIDs whose values have a small fixed size, or are text that `left` cuts as it is.
PG_FIXED = frozenset({16, 18, 20, 21, 23, 26, 700, 701, 790, 1082, 1083, 1114, 1184, 1186, 1266, 1700, 2950})
PG_TEXT = frozenset({19, 25, 1042, 1043})
PG_BYTEA = 17
#: PyMySQL FIELD_TYPE codes of string, binary, JSON and geometry values: LEFT cuts them (counting bytes on binary).
MYSQL_LONG = frozenset({15, 245, 249, 250, 251, 252, 253, 254, 255})
DQ, BQ = '"', "`"


def describe_sql(sql: str) -> str:
    """A statement that returns no rows but the columns of `sql`."""
    return f"SELECT * FROM (\n{sql}\n) AS ts_q LIMIT 0"


def _alias(name: str, quote: str) -> str:
    return quote + name.replace(quote, quote * 2) + quote


def capped_postgres(sql: str, columns: Sequence[tuple[str, int]]) -> str:
    if not columns:
        return sql
    parts = []
    for i, (name, oid) in enumerate(columns):
        ref = f"ts_q.c{i}"
        if oid in PG_FIXED:
            value = ref
        elif oid in PG_TEXT:
            value = f"left({ref}, {CAP})"
        elif oid == PG_BYTEA:
            value = f"substring({ref} from 1 for {CAP})"
        else:
            value = f"left(CAST({ref} AS text), {CAP})"
        parts.append(f"{value} AS {_alias(name, DQ)}")
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    return f"SELECT {', '.join(parts)} FROM (\n{sql}\n) AS ts_q({names})"


def capped_sqlite(sql: str, columns: Sequence[str]) -> str:
    if not columns:
        return sql
    # SQLite's text functions stop at a NUL character, so a text that fits (measured in bytes) is passed whole.
    parts = [
        f"CASE WHEN typeof(c{i}) = 'text' AND length(CAST(c{i} AS BLOB)) <= {CAP} THEN c{i}"
        f" WHEN typeof(c{i}) IN ('text', 'blob') THEN substr(c{i}, 1, {CAP}) ELSE c{i} END AS {_alias(n, DQ)}"
        for i, n in enumerate(columns)
    ]
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    return f"WITH ts_q({names}) AS (\n{sql}\n) SELECT {', '.join(parts)} FROM ts_q"


def capped_mysql(sql: str, columns: Sequence[tuple[str, int]]) -> str:
    if not columns:
        return sql
    parts = [
        f"{f'LEFT(c{i}, {CAP})' if code in MYSQL_LONG else f'c{i}'} AS {_alias(name, BQ)}"
        for i, (name, code) in enumerate(columns)
    ]
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    return f"WITH ts_q({names}) AS (\n{sql}\n) SELECT {', '.join(parts)} FROM ts_q"
