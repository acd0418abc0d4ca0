"""The head of a table card as text (SPEC §2): what the table is, its role, keys, links and columns to watch.

Shared by the full card (`catalog.card_text`) and by search candidates, which render it from the card as the
reader may see it (`core.cards.card_view`), so a candidate's head never names what its reader may not see.
"""

from __future__ import annotations

from typing import Any

COPY_ROLES = frozenset({"backup", "draft", "staging", "snapshot"})


#: In place of a row count where a row filter applies to the reader: the table's total is not theirs to know.
FILTERED_ROWS = "rows filtered for you"
#: The rows a reader's own SQL reads, where a row filter applies and they were counted (`core.access.viewer_facts`).
READABLE_ROWS = "{count:,} rows you may read (filtered for you)"


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "unknown"


def _rows(entry: dict[str, Any], *, exact: bool = True) -> str:
    if entry.get("rows_filtered"):
        count = entry.get("row_count")
        return READABLE_ROWS.format(count=count) if isinstance(count, int) else FILTERED_ROWS
    return _count(entry.get("row_count")) + ("" if exact else " (estimate)") + " rows"


def header_lines(card: dict[str, Any], engine: str | None = None) -> list[str]:
    where = card["database"] + (f".{card['schema']}" if card.get("schema") else "")
    role = card["role"] + (f" copy of {card['copy_of']}" if card.get("copy_of") else "")
    rows = _rows(card, exact=bool(card.get("row_count_exact")))
    lines = [f"Table {card['table']} in {where}{f' ({engine})' if engine else ''}: {role}, {rows}"]
    lines.append(f"Purpose: {card['purpose']}")
    if card.get("copy_of"):
        lines.append(
            f"Stale copy: use {card['copy_of']} unless the user asks about this copy. Evidence: "
            + _evidence(card.get("copy_evidence") or {})
        )
    elif card.get("role") in COPY_ROLES:
        lines.append("Stale copy: its rows may be out of date; use it only when the user asks about this copy.")
    if card.get("copies"):
        listed = ", ".join(f"{c['table']} ({c['role']}, {_rows(c)})" for c in card["copies"])
        lines.append(f"Copies of this table (do not use unless asked): {listed}")
    if card.get("primary_key"):
        lines.append("Primary key: " + ", ".join(card["primary_key"]))
    for fk in card.get("foreign_keys", []):
        lines.append(f"Foreign key: {', '.join(fk['columns'])} -> {fk['references']}({', '.join(fk['ref_columns'])})")
    if card.get("referenced_by"):
        lines.append("Referenced by: " + ", ".join(card["referenced_by"]))
    inferred = [j for j in card.get("joins", []) if j["kind"] == "inferred"]
    for join in inferred[:8]:
        lines.append(
            f"Inferred join: {', '.join(join['from_columns'])} -> {join['to']}({', '.join(join['to_columns'])}) "
            f"confidence {join['confidence']:.2f}"
        )
    if card.get("watch"):
        lines.append("Columns to watch: " + "; ".join(f"{k}: {v}" for k, v in card["watch"].items()))
    if card.get("skipped_reason"):
        lines.append(f"Analysis incomplete: {card['skipped_reason']}")
    return lines


def _evidence(evidence: dict[str, Any]) -> str:
    parts = []
    if "name_pattern" in evidence:
        parts.append(f"name {evidence['name_pattern']}")
    if "column_similarity" in evidence:
        parts.append(f"column overlap {evidence['column_similarity']:.0%}")
    rows = evidence.get("rows") or {}
    if rows.get("copy") is not None and rows.get("live") is not None:
        parts.append(f"{rows['copy']:,} vs {rows['live']:,} rows")
    if evidence.get("key_containment") is not None:
        parts.append(f"{evidence['key_containment']:.0%} of its keys in the live table")
    return ", ".join(parts) or "name and columns"
