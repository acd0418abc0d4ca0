"""What the engines say when a limit stopped or cut a statement, as messages that tell the model what to change
(SPEC §7, layer 4). A limit that would cut a result quietly (a NULL for a value too long, a recursive CTE stopped
short, a GROUP_CONCAT cut) fails the statement instead: a result is never returned incomplete without saying so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from workers.sql.limits import SQLITE_HEAP_LIMIT, SqlLimits

#: ER_TOO_BIG_SELECT (max_join_size) and ER_RECORD_FILE_FULL (a temporary table past tmp_disk_table_size).
MYSQL_TOO_BIG_SELECT = 1104
MYSQL_TABLE_FULL = 1114
#: Warnings that mean the result is not what the statement asked for: ER_WARN_ALLOWED_PACKET_OVERFLOWED (REPEAT,
#: LPAD, CONCAT ... gave NULL), ER_CUT_VALUE_GROUP_CONCAT, ER_QUERY_RESULT_INCOMPLETE (max_recursive_iterations).
MYSQL_PACKET_OVERFLOW = 1301
MYSQL_GROUP_CONCAT_CUT = 1260
MYSQL_RESULT_INCOMPLETE = 1931
MYSQL_CUT_WARNINGS = frozenset({MYSQL_PACKET_OVERFLOW, MYSQL_GROUP_CONCAT_CUT, MYSQL_RESULT_INCOMPLETE})
#: PostgreSQL's configuration_limit_exceeded, which temp_file_limit raises.
PG_CONFIGURATION_LIMIT = "53400"
#: GROUP_CONCAT's limit on the model's sessions (MariaDB's default is 1 MiB, MySQL's 1 KiB): the size of the
#: longest value SQLite builds.
GROUP_CONCAT_MAX_LEN = 8_000_000


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


def temp_space_message(limits: SqlLimits) -> str:
    return (
        f"the query needs more temporary space than the {_mib(limits.temp_bytes)} it may use (a large sort, "
        "DISTINCT, GROUP BY, join or recursive CTE); filter rows first, aggregate before sorting, or add a LIMIT"
    )


def sqlite_memory_message() -> str:
    return (
        f"the query needs more memory than SQLite queries may use together ({_mib(SQLITE_HEAP_LIMIT)}: sorts, "
        "DISTINCT, GROUP BY and subqueries are kept in memory); filter rows first, aggregate before sorting, or add "
        "a LIMIT"
    )


def too_many_rows_message(limits: SqlLimits) -> str:
    return (
        f"the query would examine more than {limits.max_examined_rows:,} rows (or row combinations of a join); "
        "join on key columns instead of a cross join, and filter the tables first"
    )


def mysql_limit_message(code: Any, limits: SqlLimits) -> str | None:
    """The message for a MariaDB/MySQL error that a limit caused, or None for any other error."""
    if code == MYSQL_TOO_BIG_SELECT:
        return too_many_rows_message(limits)
    if code == MYSQL_TABLE_FULL:
        return temp_space_message(limits)
    return None


def postgres_limit_message(sqlstate: str | None, message: str, limits: SqlLimits) -> str | None:
    if sqlstate == PG_CONFIGURATION_LIMIT and "temp_file_limit" in message:
        return temp_space_message(limits)
    return None


def mysql_cut_result(warnings: Iterable[Sequence[Any]]) -> str | None:
    """The message for the first warning (Level, Code, Message) that means the result was cut, or None."""
    for warning in warnings:
        code = int(warning[1]) if len(warning) > 1 else None
        if code == MYSQL_PACKET_OVERFLOW:
            return (
                "a value came back as NULL because it would be longer than the server allows "
                f"({warning[2]}); build shorter values (LEFT, SUBSTRING) or aggregate"
            )
        if code == MYSQL_GROUP_CONCAT_CUT:
            return (
                f"GROUP_CONCAT was cut at {GROUP_CONCAT_MAX_LEN:,} bytes ({warning[2]}); concatenate fewer values, "
                "or count them with COUNT"
            )
        if code == MYSQL_RESULT_INCOMPLETE:
            return (
                "the recursive CTE was stopped at the server's limit of iterations, so the result would be "
                "incomplete; make its recursive part stop sooner (a tighter WHERE), or generate rows another way"
            )
    return None


def cut_result(message: str) -> str:
    return f"the result was not returned because it would be incomplete: {message}"
