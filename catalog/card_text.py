"""Rendering a table card for the model, shortened to a size budget without losing any column's name or key.

When the full card is larger than the budget, every column keeps its name, type and key role; details (stats,
frequent values, codes) are kept first for keys, code columns and columns to watch, and the columns whose
details were cut are listed by name so the model can ask for them with `columns=`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.cards.card_head import header_lines

DEFAULT_BUDGET = 6000


def column_brief(column: dict[str, Any]) -> str:
    key = f" {column['key']}" if column.get("key") else ""
    return f"{column['name']} {column['type']}{key}"


def column_detail(column: dict[str, Any]) -> str:
    parts = [column_brief(column)]
    if column.get("comment"):
        parts.append(f'"{column["comment"]}"')
    if column.get("masked"):  # set by core.cards.card_view: no values, stats or codes for this reader
        parts.append(f"masked for you ({column['masked']}): results show no real values")
    stats = column.get("stats") or {}
    figures = []
    if stats.get("null_ratio"):
        figures.append(f"nulls {stats['null_ratio']:.0%}")
    if "distinct" in stats:
        figures.append(f"distinct {stats['distinct']:,}")
    if stats.get("min") is not None:
        figures.append(f"range {stats['min']} .. {stats['max']}")
    if stats.get("date_text_format"):
        figures.append(f"text dates {stats['date_text_format']}")
    if figures:
        parts.append(", ".join(figures))
    if column.get("codes"):
        codes = [f"{c['code']}={c['meaning'] or '?'}" for c in column["codes"][:20]]
        group = f", codes of {column['codes_group']}" if column.get("codes_group") else ""
        source = f" (from {column['codes_source']}{group})" if column.get("codes_source") else " (meanings unknown)"
        parts.append("codes: " + ", ".join(codes) + source)
    elif column.get("frequent"):
        parts.append("frequent: " + ", ".join(f"{v} ({s:.0%})" for v, s in column["frequent"][:5]))
    if column.get("watch"):
        parts.append(f"WATCH: {column['watch']}")
    return " | ".join(parts)


def _priority(column: dict[str, Any]) -> int:
    if column.get("key") or column.get("watch"):
        return 0
    if column.get("codes"):
        return 1
    return 2


def render_card(
    card: dict[str, Any],
    *,
    budget: int = DEFAULT_BUDGET,
    columns: Sequence[str] | None = None,
    engine: str | None = None,
) -> str:
    """The card as text within `budget` characters (all names and keys always kept), or details of `columns`."""
    lines = header_lines(card, engine)
    all_columns = card.get("columns", [])
    if columns is not None:
        wanted = {c.lower() for c in columns}
        chosen = [c for c in all_columns if c["name"].lower() in wanted]
        missing = sorted(wanted - {c["name"].lower() for c in chosen})
        lines.append(f"Details of {len(chosen)} requested column(s):")
        lines.extend(f"- {column_detail(c)}" for c in chosen)
        if missing:
            lines.append("No such column: " + ", ".join(missing))
        others = [column_brief(c) for c in all_columns if c not in chosen]
        if others:
            room = budget - sum(len(line) + 1 for line in lines) - 80
            shown: list[str] = []
            for brief in others:
                room -= len(brief) + 2
                if room < 0:
                    break
                shown.append(brief)
            more = (
                f", … {len(others) - len(shown)} more (open the card without columns)"
                if len(shown) < len(others)
                else ""
            )
            lines.append(f"Other columns ({len(others)}): " + ", ".join(shown) + more)
        return "\n".join(lines)
    details = [column_detail(c) for c in all_columns]
    full = "\n".join([*lines, f"Columns ({len(all_columns)}):", *(f"- {d}" for d in details)])
    if len(full) <= budget:
        return full
    briefs = [column_brief(c) for c in all_columns]
    # The list of cut names is part of the text too: reserve it as if every column were cut, and give a
    # column's name back to the budget when its details are kept.
    used = sum(len(line) + 1 for line in lines) + sum(len(b) + 3 for b in briefs) + 120
    used += sum(len(c["name"]) + 2 for c in all_columns)
    keep: set[int] = set()
    for index in sorted(range(len(all_columns)), key=lambda i: (_priority(all_columns[i]), i)):
        extra = len(details[index]) - len(briefs[index]) - len(all_columns[index]["name"]) - 2
        if used + extra <= budget:
            keep.add(index)
            used += extra
    cut = [all_columns[i]["name"] for i in range(len(all_columns)) if i not in keep]
    body = [f"- {details[i] if i in keep else briefs[i]}" for i in range(len(all_columns))]
    lines.append(f"Columns ({len(all_columns)}; details shortened):")
    lines.extend(body)
    lines.append(f"Details cut for {len(cut)} column(s): {', '.join(cut)}. Ask for them with columns=[...].")
    return "\n".join(lines)
