"""Columns that are easy to misuse: the mistakes that give a plausible but wrong number without any error."""

from __future__ import annotations

import re
from collections.abc import Sequence

from catalog.connectors.base import ColumnInfo
from catalog.profiling import ColumnProfile

FREE_TEXT_NAMES = re.compile(r"(^|_)(remark|rmk|memo|note|notes|comment|cmt|desc|description|etc|bigo)(_|$)", re.I)
STATUS_NAMES = re.compile(r"(stat|status|sts|state)", re.I)
AMOUNT_NAMES = re.compile(r"(amt|amount|price|prc|total|tot|sum|cost|fee|pay|paid|bal|balance)", re.I)
CURRENCY_NAMES = re.compile(r"(curr|currency|cur_cd|ccy)", re.I)
SOFT_DELETE_NAMES = re.compile(
    r"(^|_)(use_yn|del_yn|delete_yn|deleted|is_deleted|del_flag|active|is_active|"
    r"active_yn|valid_yn|use_flag|status_yn|enabled)$",
    re.I,
)

#: How a soft-delete or active flag's reason to watch begins (read by the answer's note on such a filter).
SOFT_DELETE_WATCH = "soft-delete/active flag"


def columns_to_watch(
    columns: Sequence[ColumnInfo], profiles: dict[str, ColumnProfile], code_columns: set[str]
) -> dict[str, str]:
    """Column name → why it is easy to misuse."""
    notes: dict[str, str] = {}
    status_columns = [c.name for c in columns if c.name in code_columns and STATUS_NAMES.search(c.name)]
    currency = next((c.name for c in columns if CURRENCY_NAMES.search(c.name)), None)
    for column in columns:
        profile = profiles.get(column.name)
        if profile is None:
            continue
        reason = _reason(column, profile, status_columns, currency, column.name in code_columns)
        if reason:
            notes[column.name] = reason
    return notes


def _reason(
    column: ColumnInfo,
    profile: ColumnProfile,
    status_columns: list[str],
    currency: str | None,
    is_code: bool,
) -> str | None:
    if column.family == "text" and profile.date_text_format:
        return (
            f"date stored as text ({profile.date_text_format}); compare as text or convert, do not use date functions"
        )
    if column.family == "text" and not is_code and FREE_TEXT_NAMES.search(column.name):
        if status_columns:
            return f"free text written by people; filter on {status_columns[0]}, not on words in this column"
        return "free text written by people; do not filter or group on it"
    if is_code and SOFT_DELETE_NAMES.search(column.name):
        values = ", ".join(v for v, _ in profile.frequent[:3])
        return f"{SOFT_DELETE_WATCH} ({values}); current rows need a filter on it"
    if column.family in ("integer", "decimal", "float") and AMOUNT_NAMES.search(column.name):
        share = profile.negative_share or 0.0
        if share >= 0.99 and profile.sample_size:
            return "amounts stored as negative numbers; sum with care next to positive amounts"
        if 0.01 <= share < 0.99:
            return f"mixed signs ({share:.0%} negative); check what negative rows mean before summing"
        if currency:
            return f"amounts in several currencies ({currency}); do not add them up across currencies"
    return None
