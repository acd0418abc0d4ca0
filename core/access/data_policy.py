"""Row filters and column masks of one grant (SPEC §6), combined over a user's roles by
`core.access.permissions.Principal`.

Table patterns of row filters and the TABLE part of mask patterns match like deny patterns: without a schema they
cover the name in every schema, so a restriction never covers less than it says.
- Row filters: within one grant, every filter whose pattern matches a table applies (AND); a grant that allows a
  table without a matching filter admits all its rows; over the grants and roles that allow a table, a row is seen
  when any of them admits it (OR), the same union as table grants.
- Column masks: within one grant, the most restrictive matching mask applies; over the grants and roles that allow
  the table, the least restrictive one (a grant without a mask for the column shows it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from core.access.row_predicates import MASK_ORDER, MaskKind, parse_mask_pattern
from core.config.file import Grant


@dataclass(frozen=True)
class RowFilter:
    """The rows of one table a user may read: those matching any alternative, where an alternative holds when all
    its predicates (as written in tablescout.yaml) hold. No alternatives: no row at all."""

    alternatives: tuple[tuple[str, ...], ...]

    def describe(self) -> str:
        if not self.alternatives:
            return "no rows"
        parts = [" AND ".join(a) if len(a) == 1 else "(" + " AND ".join(a) + ")" for a in self.alternatives]
        return parts[0] if len(parts) == 1 else " OR ".join(f"({p})" if " AND " in p else p for p in parts)


def table_pattern_matches(pattern: str, table: str, schema: str | None) -> bool:
    wanted = pattern.casefold()
    if "." in wanted:
        schema_pattern, _, table_pattern = wanted.rpartition(".")
        return fnmatchcase(table.casefold(), table_pattern) and fnmatchcase((schema or "").casefold(), schema_pattern)
    return fnmatchcase(table.casefold(), wanted)


def grant_filters(grant: Grant, table: str, schema: str | None) -> tuple[str, ...]:
    """The predicates of `grant` that apply to `schema.table` (all must hold); () when the grant admits every row."""
    return tuple(p for key, p in grant.row_filters.items() if table_pattern_matches(key, table, schema))


def mask_pattern_matches(pattern: str, table: str, column: str, schema: str | None) -> bool:
    schema_pattern, table_pattern, column_pattern = parse_mask_pattern(pattern)
    if schema_pattern is not None and not fnmatchcase((schema or "").casefold(), schema_pattern.casefold()):
        return False
    return fnmatchcase(table.casefold(), table_pattern.casefold()) and fnmatchcase(
        column.casefold(), column_pattern.casefold()
    )


def grant_mask(grant: Grant, table: str, column: str, schema: str | None) -> MaskKind | None:
    """The most restrictive mask `grant` puts on the column, or None when it shows it."""
    found = [kind for key, kind in grant.column_masks.items() if mask_pattern_matches(key, table, column, schema)]
    return max(found, key=MASK_ORDER.index) if found else None


def grant_masks_table(grant: Grant, table: str, schema: str | None) -> bool:
    """Could `grant` mask some column of the table?"""
    for key in grant.column_masks:
        schema_pattern, table_pattern, _ = parse_mask_pattern(key)
        in_schema = schema_pattern is None or fnmatchcase((schema or "").casefold(), schema_pattern.casefold())
        if in_schema and fnmatchcase(table.casefold(), table_pattern.casefold()):
            return True
    return False


def union_filter(per_grant: Iterable[tuple[str, ...]]) -> RowFilter | None:
    """Combine the filters of the grants that allow a table: None (every row) when one of them admits every row."""
    alternatives: list[tuple[str, ...]] = []
    for predicates in per_grant:
        if not predicates:
            return None
        if predicates not in alternatives:
            alternatives.append(predicates)
    return RowFilter(tuple(alternatives))


def least_mask(per_grant: Iterable[MaskKind | None]) -> MaskKind | None:
    """The least restrictive of the masks the grants that allow a table give a column ("hide" when none does)."""
    kinds = list(per_grant)
    if not kinds:
        return "hide"
    if any(k is None for k in kinds):
        return None
    return min((k for k in kinds if k is not None), key=MASK_ORDER.index)
