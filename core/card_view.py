"""A table card as one reader may see it: nothing in it leads to, or comes from, a table the reader may not see.

The stored card is built for everyone; before a card (or a search candidate made from it) is shown, links to
hidden tables are dropped (joins, foreign keys, referenced-by, copies), a copy of a hidden live table no longer
names it nor carries its row count, and code meanings read from a hidden code table (or from a view over one) are
left out, keeping the codes themselves (they are the shown table's own values). Whether the table itself may be
seen is the caller's check (`Principal.may_see_table`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

#: (schema or None for the default schema, table) → may the reader see it.
MaySee = Callable[[str | None, str], bool]

_REFERS_TO = "refers to "


def split_qualified(qualified: object) -> tuple[str | None, str]:
    """`schema.TABLE` or `TABLE` (the default schema) as the card writes links."""
    schema, _, name = str(qualified).rpartition(".")
    return (schema or None), name


def _visible_link(may_see: MaySee, qualified: object) -> bool:
    schema, name = split_qualified(qualified)
    return may_see(schema, name)


def codes_visible(column: dict[str, Any], may_see: MaySee) -> bool:
    """May the reader see where the meanings of this column's codes were read from?"""
    if "codes_from" in column:
        read_from = column["codes_from"]
        if not isinstance(read_from, list):
            return False  # a code view whose reads could not be followed
        return all(may_see(str(schema) if schema else None, str(name)) for schema, name in read_from)
    # Cards analysed before `codes_from` was recorded: "CODE_DTL group ORD_STAT", "EMP_MST" or "column comment".
    source = column.get("codes_source")
    if not source or source == "column comment":
        return True
    table = str(source).split(" group ", 1)[0]
    return _visible_link(may_see, table)


def _without_meanings(column: dict[str, Any]) -> dict[str, Any]:
    column = dict(column)
    column["codes"] = [{**c, "meaning": None} for c in column.get("codes") or []]
    column["codes_source"] = None
    column["codes_from"] = []
    return column


def _purpose(purpose: str, hidden_live: str | None, may_see: MaySee) -> str:
    parts = purpose.split("; ")
    kept = []
    for part in parts:
        if hidden_live is not None and part.endswith(f" of {hidden_live}"):
            part = part[: -len(f" of {hidden_live}")]
        if part.startswith(_REFERS_TO):
            targets = [t for t in part[len(_REFERS_TO) :].split(", ") if _visible_link(may_see, t)]
            if not targets:
                continue
            part = _REFERS_TO + ", ".join(targets)
        kept.append(part)
    return "; ".join(kept)


def card_for_viewer(card: dict[str, Any], may_see: MaySee) -> dict[str, Any]:
    """A copy of `card` with everything about tables `may_see` refuses left out."""
    shown = copy.deepcopy(card)
    shown["joins"] = [j for j in shown.get("joins") or [] if _visible_link(may_see, j.get("to"))]
    shown["foreign_keys"] = [
        fk for fk in shown.get("foreign_keys") or [] if _visible_link(may_see, fk.get("references"))
    ]
    shown["referenced_by"] = [t for t in shown.get("referenced_by") or [] if _visible_link(may_see, t)]
    shown["copies"] = [
        c for c in shown.get("copies") or [] if _visible_link(may_see, c.get("table") if isinstance(c, dict) else c)
    ]
    hidden_live = None
    if shown.get("copy_of") and not _visible_link(may_see, shown["copy_of"]):
        hidden_live = str(shown["copy_of"])
        shown["copy_of"] = None
        shown["copy_evidence"] = None
    if isinstance(shown.get("purpose"), str):
        shown["purpose"] = _purpose(shown["purpose"], hidden_live, may_see)
    shown["columns"] = [
        c if not c.get("codes") or codes_visible(c, may_see) else _without_meanings(c)
        for c in shown.get("columns") or []
    ]
    return shown
