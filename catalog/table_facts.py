"""Measuring one table: row count, a bounded sample, column profiles, newest dates and key samples.

The result is stored with the table (`facts`) so that a later run can skip unchanged tables and still judge
copies and joins across the whole database.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from decimal import Decimal
from typing import Any

from catalog.code_values import is_code_column
from catalog.connectors.base import Connector, TableInfo
from catalog.join_inference import KEY_SUFFIX
from catalog.profiling import ColumnProfile, profile_sample, render_value

EXACT_COUNT_BELOW = 200_000
KEY_SAMPLE = 200
DATE_FAMILIES = {"date", "datetime"}


@dataclass
class Measured:
    """A table as this run saw it: its description and its (new or reused) facts."""

    info: TableInfo
    facts: dict[str, Any]
    skipped_reason: str | None = None


def fingerprint(info: TableInfo) -> str:
    """Changes when the table's shape or its statistics row estimate changes."""
    shape = _plain(info)
    return hashlib.sha256(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()


_SCALARS = frozenset({str, int, float, bool, type(None)})
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # each dataclass's field names, read once


def _plain(value: Any) -> Any:
    """`dataclasses.asdict` without its deep copies (a tenth of a schema-only analysis on wide tables): the same
    JSON, so stored fingerprints stay valid."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]
    names = _FIELD_NAMES.get(kind)
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(value))
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, Decimal) and value == value.to_integral():
        return int(value)
    return render_value(value)


def _distinct(values: list[Any], limit: int) -> list[Any]:
    seen: dict[Any, None] = {}
    for value in values:
        if value is not None and value not in seen:
            seen[value] = None
            if len(seen) >= limit:
                break
    return [_jsonable(v) for v in seen]


def measure(connector: Connector, info: TableInfo, sample_rows: int, *, profile: bool = True) -> dict[str, Any]:
    """Facts about one table. `profile=False` measures the schema only (no rows read)."""
    facts: dict[str, Any] = {"fingerprint": fingerprint(info), "profiled": profile}
    estimate = info.row_estimate
    exact = False
    if profile and info.ref.kind == "table" and (estimate is None or estimate < EXACT_COUNT_BELOW):
        estimate, exact = connector.exact_count(info.ref), True
    facts["row_count"], facts["row_count_exact"] = estimate, exact
    if not profile:
        return facts
    names = [c.name for c in info.columns]
    sample = connector.sample(info.ref, names, sample_rows)
    facts["sample"] = {"rows": len(sample.rows), "method": sample.method, "complete": sample.complete}
    if sample.complete and info.ref.kind == "view":
        facts["row_count"], facts["row_count_exact"] = len(sample.rows), True
    profiles = profile_sample(info.columns, sample, facts["row_count"])
    facts["profiles"] = {name: p.to_json() for name, p in profiles.items()}
    index = {c: i for i, c in enumerate(sample.columns)}
    keyed = set(info.primary_key)
    facts["newest"] = {
        c.name.lower(): profiles[c.name].max
        for c in info.columns
        if c.name in profiles
        and profiles[c.name].max is not None
        and (c.family in DATE_FAMILIES or profiles[c.name].date_text_format)
    }
    if len(info.primary_key) == 1 and info.primary_key[0] in index:
        position = index[info.primary_key[0]]
        facts["key_sample"] = _distinct([r[position] for r in sample.rows], KEY_SAMPLE)
    facts["value_samples"] = {
        c.name: _distinct([r[index[c.name]] for r in sample.rows], KEY_SAMPLE)
        for c in info.columns
        if c.name in index and KEY_SUFFIX.search(c.name) and c.family in ("integer", "decimal", "text")
    }
    facts["code_values"] = {}
    for column in info.columns:
        column_profile = profiles.get(column.name)
        if column_profile is not None and is_code_column(column, column_profile, column.name in keyed):
            position = index[column.name]
            counts: dict[str, int] = {}
            for row in sample.rows:
                if row[position] is not None:
                    key = str(row[position]).strip()
                    counts[key] = counts.get(key, 0) + 1
            total = sum(counts.values()) or 1
            ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            facts["code_values"][column.name] = [[code, round(n / total, 4)] for code, n in ordered]
    return facts


def stored_profiles(facts: dict[str, Any]) -> dict[str, ColumnProfile]:
    return {name: ColumnProfile.from_json(data) for name, data in (facts.get("profiles") or {}).items()}


def key_resolver(measured: dict[str, Measured]) -> Callable[[str | None, str], str | None]:
    exact = {(m.info.ref.schema, m.info.ref.name): k for k, m in measured.items()}
    folded = {(m.info.ref.schema, m.info.ref.name.lower()): k for k, m in measured.items()}

    def key_of(schema: str | None, name: str) -> str | None:
        return exact.get((schema, name)) or folded.get((schema, name.lower()))

    return key_of
