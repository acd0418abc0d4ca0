"""Per-column statistics from a bounded sample: what the values look like, not just what the DDL says."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from catalog.connectors.base import ColumnInfo, Sample

FREQUENT_VALUES = 10
#: Distinct values of a short text column kept for value search (`search.values`), from the bounded sample.
INDEXED_VALUES = 100
#: Text longer than this is prose, not a name or code a question would mention.
INDEXED_VALUE_LENGTH = 60
DATE_TEXT_FORMATS = (
    (re.compile(r"^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$"), "YYYYMMDD"),
    (re.compile(r"^(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$"), "YYYY-MM-DD"),
    (re.compile(r"^(19|20)\d{2}/(0[1-9]|1[0-2])/(0[1-9]|[12]\d|3[01])$"), "YYYY/MM/DD"),
    (re.compile(r"^(19|20)\d{2}(0[1-9]|1[0-2])$"), "YYYYMM"),
    (re.compile(r"^(19|20)\d{2}-(0[1-9]|1[0-2])-\d{2}[ T]\d{2}:\d{2}(:\d{2})?"), "YYYY-MM-DD HH:MM:SS"),
)
ORDERED_FAMILIES = {"integer", "decimal", "float", "date", "datetime", "time"}


@dataclass
class ColumnProfile:
    sample_size: int
    complete: bool
    null_ratio: float
    distinct: int
    distinct_estimate: int
    frequent: list[tuple[str, float]] = field(default_factory=list)
    min: str | None = None
    max: str | None = None
    avg_length: float | None = None
    max_length: int | None = None
    negative_share: float | None = None
    blank_ratio: float | None = None
    date_text_format: str | None = None
    values: list[str] = field(default_factory=list)  # distinct short text values of the sample, for value search

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["frequent"] = [list(pair) for pair in self.frequent]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ColumnProfile:
        values = dict(data)
        values["frequent"] = [(str(v), float(s)) for v, s in values.get("frequent", [])]
        return cls(**values)


def render_value(value: Any) -> str:
    """A value as the card shows it: short, stable across engines (Decimal('10.00') and 10.0 differ as text)."""
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Decimal):
        normal = value.normalize()
        return format(normal, "f") if normal == normal.to_integral() else str(normal)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    text = str(value)
    if text.endswith(".000000") and len(text) == 26:
        text = text[:-7]  # SQLite hands datetimes back as text with an empty fraction
    return text if len(text) <= 80 else text[:77] + "..."


def estimate_distinct(counts: Counter[Any], sample_size: int, total_rows: int | None, complete: bool) -> int:
    """Distinct values in the table: exact for a complete sample, else the GEE estimator (Charikar et al. 2000)."""
    seen = len(counts)
    if complete or not total_rows or total_rows <= sample_size or sample_size == 0:
        return seen
    once = sum(1 for c in counts.values() if c == 1)
    if once == sample_size:
        return total_rows  # every sampled value was unique: a key-like column
    estimate = math.sqrt(total_rows / sample_size) * once + (seen - once)
    return int(min(total_rows, max(seen, round(estimate))))


def _date_text_format(values: Sequence[str]) -> str | None:
    probe = [v.strip() for v in values[:500] if v.strip()]
    if len(probe) < 3:
        return None
    for pattern, name in DATE_TEXT_FORMATS:
        if all(pattern.match(v) for v in probe):
            return name
    return None


def _ordered(values: list[Any]) -> list[Any]:
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def profile_column(
    column: ColumnInfo, values: Sequence[Any], *, complete: bool, total_rows: int | None
) -> ColumnProfile:
    size = len(values)
    present = [v for v in values if v is not None]
    counts: Counter[Any] = Counter(v if not isinstance(v, bytes) else len(v) for v in present)
    profile = ColumnProfile(
        sample_size=size,
        complete=complete,
        null_ratio=round(1 - len(present) / size, 4) if size else 0.0,
        distinct=len(counts),
        distinct_estimate=estimate_distinct(counts, size, total_rows, complete),
    )
    if not present:
        return profile
    if column.family != "binary":
        top = counts.most_common(FREQUENT_VALUES)
        if top and (top[0][1] > 1 or len(counts) <= FREQUENT_VALUES):
            profile.frequent = [(render_value(v), round(c / len(present), 4)) for v, c in top]
    if column.family in ORDERED_FAMILIES:
        ordered = _ordered(present)
        profile.min, profile.max = render_value(ordered[0]), render_value(ordered[-1])
    if column.family in ("integer", "decimal", "float"):
        numeric = [v for v in present if isinstance(v, int | float | Decimal) and not isinstance(v, bool)]
        if numeric:
            profile.negative_share = round(sum(1 for v in numeric if v < 0) / len(numeric), 4)
    if column.family == "text":
        texts = [str(v) for v in present]
        # most frequent first, ties by value: the same sample in another order keeps the same values
        ranked = sorted(Counter(t.strip() for t in texts).items(), key=lambda p: (-p[1], p[0]))
        profile.values = [t for t, _ in ranked if 0 < len(t) <= INDEXED_VALUE_LENGTH][:INDEXED_VALUES]
        lengths = [len(t) for t in texts]
        profile.avg_length = round(sum(lengths) / len(lengths), 1)
        profile.max_length = max(lengths)
        profile.blank_ratio = round(sum(1 for t in texts if not t.strip()) / len(texts), 4)
        profile.date_text_format = _date_text_format(texts)
        if profile.date_text_format:
            ordered = sorted(t.strip() for t in texts if t.strip())
            profile.min, profile.max = ordered[0], ordered[-1]
    return profile


def profile_sample(columns: Sequence[ColumnInfo], sample: Sample, total_rows: int | None) -> dict[str, ColumnProfile]:
    index = {name: i for i, name in enumerate(sample.columns)}
    profiles = {}
    for column in columns:
        position = index.get(column.name)
        if position is None:
            continue
        values = [row[position] for row in sample.rows]
        profiles[column.name] = profile_column(column, values, complete=sample.complete, total_rows=total_rows)
    return profiles
