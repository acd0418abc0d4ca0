"""How tables join: declared foreign keys, and inferred candidates each with its basis and a confidence.

An inferred candidate needs a key-like column (`*_ID`, `*_CD`, `*_NO`, `*_KEY`, or the target key's own name)
whose type agrees with a single-column key of another table and whose sampled values are found there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from catalog.connectors.base import TableInfo

KEY_SUFFIX = re.compile(r"(?:^|_|(?<=[a-z]))(id|cd|code|no|num|key|seq)$", re.I)
COMPATIBLE = {
    "integer": {"integer", "decimal"},
    "decimal": {"integer", "decimal"},
    "text": {"text"},
    "date": {"date"},
}
MIN_CONTAINMENT = 0.8


@dataclass(frozen=True)
class JoinEdge:
    from_table: str
    from_columns: tuple[str, ...]
    to_table: str
    to_columns: tuple[str, ...]
    kind: str  # "declared" | "inferred"
    basis: str
    confidence: float


def declared_joins(info: TableInfo, key_of: Callable[[str | None, str], str | None]) -> list[JoinEdge]:
    edges = []
    for fk in info.foreign_keys:
        target = key_of(fk.ref_schema if fk.ref_schema is not None else info.ref.schema, fk.ref_table)
        if target is None:
            continue
        edges.append(
            JoinEdge(
                from_table=info.ref.qualified,
                from_columns=fk.columns,
                to_table=target,
                to_columns=fk.ref_columns,
                kind="declared",
                basis="declared foreign key",
                confidence=1.0,
            )
        )
    return edges


def _single_keys(info: TableInfo) -> list[str]:
    keys = [info.primary_key[0]] if len(info.primary_key) == 1 else []
    keys += [u[0] for u in info.unique if len(u) == 1 and u[0] not in keys]
    return keys


def _name_match(column: str, target_table: str, target_key: str) -> str | None:
    col, key, table = column.lower(), target_key.lower(), target_table.lower()
    if col == key and KEY_SUFFIX.search(col):
        return f"same name {column}"
    stem = re.split(r"_(mst|master|tbl|table|info|m)$", table)[0]
    if key in ("id", "code", "cd", "no") and col in (f"{stem}_{key}", f"{stem}{key}"):
        return f"{column} names table {target_table}"
    return None


@dataclass(frozen=True)
class Candidate:
    from_info: TableInfo
    column: str
    to_info: TableInfo
    key: str
    basis: str


def name_candidates(tables: Sequence[TableInfo], declared: set[tuple[str, str, str]]) -> list[Candidate]:
    """Column/key pairs whose names and types make a join plausible; values are checked afterwards."""
    targets = [(t, k) for t in tables for k in _single_keys(t)]
    found = []
    for info in tables:
        families = {c.name: c.family for c in info.columns}
        for column in info.columns:
            if not KEY_SUFFIX.search(column.name) or info.primary_key == (column.name,):
                continue
            for target, key in targets:
                if target.ref == info.ref or (info.ref.qualified, column.name, target.ref.qualified) in declared:
                    continue
                key_family = {c.name: c.family for c in target.columns}.get(key)
                if key_family is None or key_family not in COMPATIBLE.get(families[column.name], set()):
                    continue
                basis = _name_match(column.name, target.ref.name, key)
                if basis is not None:
                    found.append(Candidate(info, column.name, target, key, basis))
    return found


def inferred_join(candidate: Candidate, containment: float | None, sampled: int) -> JoinEdge | None:
    if containment is None or containment < MIN_CONTAINMENT:
        return None
    confidence = round(min(0.95, 0.45 + 0.5 * containment), 3)
    basis = (
        f"{candidate.basis}, type agrees, {containment:.0%} of {sampled} sampled values found in "
        f"{candidate.to_info.ref.name}.{candidate.key}"
    )
    return JoinEdge(
        from_table=candidate.from_info.ref.qualified,
        from_columns=(candidate.column,),
        to_table=candidate.to_info.ref.qualified,
        to_columns=(candidate.key,),
        kind="inferred",
        basis=basis,
        confidence=confidence,
    )
