"""Row-filter predicates and column-mask patterns as written in tablescout.yaml (SPEC §6).

A row filter is a boolean SQL expression over one table's columns, e.g. `SHIP_CITY = {user.city}`,
`DEPT_CD IN {user.departments}` or `REGION_CD = 'KR-26'`. `{user.ATTR}` stands for a directory attribute of the
asking user; it is never pasted into SQL: parsing turns each one into a marker column that the SQL rewriter
(`workers.sql.row_filters`) replaces with bound parameters. A filter names columns without a table, reads no other
table (no subqueries) and calls no function that is not a plain scalar one.

A mask pattern is `TABLE.COLUMN` (any schema) or `schema.TABLE.COLUMN`, each part a shell pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from sqlglot import exp

MaskKind = Literal["hide", "null", "redact", "hash"]
#: From least to most restrictive; a user with several roles gets the least restrictive mask any of them gives.
MASK_ORDER: tuple[MaskKind, ...] = ("hash", "redact", "null", "hide")

#: Marker columns standing for `{user.ATTR}`: a name no real column has.
MARKER_PREFIX = "__ts_user_"
_ATTRIBUTE = r"\{\s*user\.([A-Za-z][A-Za-z0-9_]{0,62})\s*\}"
# Quoted strings and names are kept as they are; `{user.x}` outside them becomes a marker (after IN: a list).
_TOKENS = re.compile(rf"""'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|(\bIN\s*)?{_ATTRIBUTE}""", re.IGNORECASE)
_QUOTED = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`""")
_LEFTOVER = re.compile(r"\{\s*user\b", re.IGNORECASE)
MAX_PREDICATE_CHARS = 2000


class PredicateError(ValueError):
    """A row filter that cannot be used; `str(exc)` says why, for the configuration error."""


@dataclass(frozen=True)
class Predicate:
    """A parsed row filter: the expression with marker columns, and the attribute each marker stands for."""

    text: str
    expression: exp.Expr
    attributes: tuple[str, ...]  # marker i stands for attributes[i]
    lists: frozenset[int]  # markers written as `IN {user.x}`: a list of values


def marker(index: int) -> str:
    return f"{MARKER_PREFIX}{index}__"


def marker_index(name: str) -> int | None:
    if name.startswith(MARKER_PREFIX) and name.endswith("__"):
        digits = name[len(MARKER_PREFIX) : -2]
        return int(digits) if digits.isdigit() else None
    return None


def parse_predicate(text: str, dialect: str | None = None) -> Predicate:
    """Parse a row filter in `dialect` (sqlglot's generic SQL when None); raise PredicateError when it is not a
    boolean expression over the table's own columns."""
    # sqlglot is imported here, not at the top: loading a configuration without row filters (every command does)
    # should not pay for it.
    import sqlglot
    from sqlglot.errors import SqlglotError

    if not text.strip():
        raise PredicateError("a row filter must be an SQL condition, e.g. SHIP_CITY = {user.city}")
    if len(text) > MAX_PREDICATE_CHARS:
        raise PredicateError(f"a row filter may be at most {MAX_PREDICATE_CHARS} characters")
    attributes: list[str] = []
    lists: set[int] = set()

    def substitute(match: re.Match[str]) -> str:
        if match.group(2) is None:
            return match.group(0)
        index = len(attributes)
        attributes.append(match.group(2))
        if match.group(1) is not None:
            lists.add(index)
            return f"{match.group(1)}({marker(index)})"
        return marker(index)

    rewritten = _TOKENS.sub(substitute, text)
    if _LEFTOVER.search(_QUOTED.sub("", rewritten)):
        raise PredicateError("write user attributes as {user.NAME} (letters, digits and '_')")
    if MARKER_PREFIX in text:
        raise PredicateError(f"names starting with {MARKER_PREFIX} are reserved")
    try:
        statements = sqlglot.parse(rewritten, read=dialect)
    except (SqlglotError, RecursionError, ValueError) as exc:
        raise PredicateError(f"the row filter does not parse as SQL: {_first_line(exc)}") from exc
    if len(statements) != 1 or statements[0] is None:
        raise PredicateError("a row filter must be one SQL condition")
    expression = statements[0]
    _check(expression, len(attributes))
    return Predicate(text=text, expression=expression, attributes=tuple(attributes), lists=frozenset(lists))


def _check(expression: exp.Expr, markers: int) -> None:
    from sqlglot import exp

    refused = (exp.Query, exp.Subquery, exp.Star, exp.Placeholder, exp.Parameter, exp.AggFunc, exp.Window)
    for part in expression.walk():
        if isinstance(part, refused):
            raise PredicateError(
                "a row filter may use only the table's own columns, values and {user.NAME} "
                "(no subqueries, *, parameters, aggregates or window functions)"
            )
        if isinstance(part, exp.Column):
            if part.table:
                raise PredicateError(f"name columns without a table in a row filter: {part.sql()}")
            index = marker_index(part.name)
            if part.name.startswith(MARKER_PREFIX) and (index is None or index >= markers):
                raise PredicateError(f"names starting with {MARKER_PREFIX} are reserved")
    node = expression.unnest() if isinstance(expression, exp.Paren) else expression
    if not isinstance(node, (exp.Predicate, exp.Connector, exp.Not, exp.Boolean)):
        raise PredicateError("a row filter must be a condition (e.g. COLUMN = value), not a value")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return " ".join(lines[0].split())[:200] if lines else type(exc).__name__


def parse_mask_pattern(pattern: str) -> tuple[str | None, str, str]:
    """`TABLE.COLUMN` → (None, TABLE, COLUMN); `schema.TABLE.COLUMN` → (schema, TABLE, COLUMN); raise ValueError."""
    parts = pattern.split(".")
    if len(parts) not in (2, 3) or not all(p.strip() for p in parts):
        raise ValueError(f"a column mask is keyed TABLE.COLUMN or schema.TABLE.COLUMN, not {pattern!r}")
    if len(parts) == 2:
        return None, parts[0], parts[1]
    return parts[0], parts[1], parts[2]
