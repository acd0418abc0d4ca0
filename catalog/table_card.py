"""Table cards: what a table holds, in the form the model and the `card --json` command see it.

A card is plain JSON (stored on the table row); `catalog.card_text` renders it for the model. Its keys are a
public contract: database, schema, table, kind, role, copy_of, copy_evidence, purpose, comment, row_count,
row_count_exact, primary_key, foreign_keys, referenced_by, copies, columns, watch, joins, sample, skipped_reason,
reads, column_reads. A column with codes names the tables their meanings were read from (`codes_from`) and the code
table's column that holds them (`codes_label`), and where its codes are one group of a code table whose groups are
named in another table, the group's name (`codes_group`, "Product category") and that table (`codes_group_from`);
a view lists every table and view it reads (`reads`, None when that
could not be followed) and, per column, the base columns it is computed from (`column_reads`): who may see those
and how they are masked decides what a reader sees of them (`core.cards.card_view`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog.connectors.base import TableInfo
from catalog.join_inference import JoinEdge
from catalog.profiling import ColumnProfile
from core.text.name_words import default_name_words

ROLE_PHRASES = {
    "backup": "a backup copy",
    "staging": "a staging/working copy",
    "draft": "a draft or test copy",
    "snapshot": "a dated snapshot",
    "partition": "one partition of data split by period or key",
    "log": "a log/history table",
    "view": "a view",
    "live": "a live table",
}


@dataclass
class CardInputs:
    database: str
    info: TableInfo
    role: str
    copy_of: str | None
    copy_evidence: dict[str, Any] | None
    row_count: int | None
    row_count_exact: bool
    profiles: dict[str, ColumnProfile]
    codes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # column → [{code, meaning, share}]
    code_sources: dict[str, str] = field(default_factory=dict)
    codes_from: dict[str, list[list[str | None]] | None] = field(default_factory=dict)  # column → [[schema, table]]
    code_labels: dict[str, str] = field(default_factory=dict)  # column → the code table's column of meanings
    #: column → the name of the code group its codes come from and the [schema, table] that names the group
    code_groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    reads: list[tuple[str | None, str]] | None = field(default_factory=list)  # a view: everything it reads
    #: A view: per column, the base columns ([schema, table, column]) it is computed from; None when not followed.
    column_reads: dict[str, list[list[str | None]]] | None = None
    watch: dict[str, str] = field(default_factory=dict)
    joins: Sequence[JoinEdge] = ()
    referenced_by: Sequence[str] = ()
    copies: Sequence[dict[str, Any]] = ()
    sample: dict[str, Any] | None = None
    skipped_reason: str | None = None


def purpose(inputs: CardInputs) -> str:
    """One line without a model: the table's own comment when it has one, else its name and shape."""
    info = inputs.info
    base = (
        info.comment.strip().rstrip(".") if info.comment else default_name_words().humanise(info.ref.name).capitalize()
    )
    parts = [base]
    if inputs.role != "live":
        parts.append(ROLE_PHRASES.get(inputs.role, inputs.role) + (f" of {inputs.copy_of}" if inputs.copy_of else ""))
    if info.primary_key:
        parts.append("one row per " + ", ".join(info.primary_key))
    targets = sorted({fk.ref_table for fk in info.foreign_keys})
    if targets:
        parts.append("refers to " + ", ".join(targets))
    return "; ".join(parts)


def _key_role(info: TableInfo, column: str) -> str | None:
    if column in info.primary_key:
        return "PK"
    if any(column in fk.columns for fk in info.foreign_keys):
        return "FK"
    if any(column in u for u in info.unique):
        return "UQ"
    return None


def build_card(inputs: CardInputs) -> dict[str, Any]:
    info = inputs.info
    columns = []
    for column in info.columns:
        profile = inputs.profiles.get(column.name)
        entry: dict[str, Any] = {
            "name": column.name,
            "type": column.data_type,
            "family": column.family,
            "nullable": column.nullable,
            "key": _key_role(info, column.name),
            "comment": column.comment,
        }
        if profile is not None:
            entry["stats"] = {
                k: v
                for k, v in {
                    "null_ratio": profile.null_ratio,
                    "distinct": profile.distinct_estimate,
                    "min": profile.min,
                    "max": profile.max,
                    "avg_length": profile.avg_length,
                    "negative_share": profile.negative_share or None,
                    "date_text_format": profile.date_text_format,
                }.items()
                if v is not None
            }
            entry["frequent"] = [[v, s] for v, s in profile.frequent]
            if profile.values:
                entry["values"] = list(profile.values)
        if column.name in inputs.codes:
            entry["codes"] = inputs.codes[column.name]
            entry["codes_source"] = inputs.code_sources.get(column.name)
            entry["codes_from"] = inputs.codes_from.get(column.name, [])
            if column.name in inputs.code_labels:
                entry["codes_label"] = inputs.code_labels[column.name]
            if column.name in inputs.code_groups:
                entry["codes_group"] = inputs.code_groups[column.name]["name"]
                entry["codes_group_from"] = inputs.code_groups[column.name]["from"]
        if column.name in inputs.watch:
            entry["watch"] = inputs.watch[column.name]
        columns.append(entry)
    return {
        "database": inputs.database,
        "schema": info.ref.schema,
        "table": info.ref.name,
        "kind": info.ref.kind,
        "role": inputs.role,
        "copy_of": inputs.copy_of,
        "copy_evidence": inputs.copy_evidence,
        "purpose": purpose(inputs),
        "comment": info.comment,
        "row_count": inputs.row_count,
        "row_count_exact": inputs.row_count_exact,
        "primary_key": list(info.primary_key),
        "foreign_keys": [
            {"columns": list(fk.columns), "references": fk.ref_table, "ref_columns": list(fk.ref_columns)}
            for fk in info.foreign_keys
        ],
        "referenced_by": sorted(inputs.referenced_by),
        "copies": list(inputs.copies),
        "columns": columns,
        "watch": dict(inputs.watch),
        "joins": [
            {
                "from_columns": list(j.from_columns),
                "to": j.to_table,
                "to_columns": list(j.to_columns),
                "kind": j.kind,
                "confidence": j.confidence,
                "basis": j.basis,
            }
            for j in inputs.joins
        ],
        "sample": inputs.sample,
        "skipped_reason": inputs.skipped_reason,
        "reads": None if inputs.reads is None else [[schema, name] for schema, name in inputs.reads],
    } | ({"column_reads": inputs.column_reads} if info.ref.kind == "view" else {})
