"""A table card as one reader may see it: nothing in it leads to, or comes from, a table the reader may not see,
and nothing in it shows values of a column masked for them or counts rows a row filter keeps from them.

The stored card is built for everyone; before a card (or a search candidate made from it) is shown, links to
hidden tables are dropped (joins, foreign keys, referenced-by, copies), a copy of a hidden live table no longer
names it nor carries its row count, and code meanings read from a hidden code table (or from a view over one) are
left out, keeping the codes themselves (they are the shown table's own values). Whether the table itself may be
seen is the caller's check (`Principal.may_see_table`).

With the reader's data policies (`DataPolicies`, from `core.permissions.Principal`):
- a column masked `hide` is not in the card at all: not among the columns, the primary key, foreign keys, joins
  (from it, or to a column hidden in the other table), columns to watch, nor in a watch note that names it;
- a column masked `null`, `redact` or `hash` is listed (name, type, key, comment) with `masked` set and without
  stats, frequent values, codes or watch note, since those show its values;
- a table a row filter applies to has no row count (`rows_filtered`: "filtered for you") nor sample size, nor do
  copies of it or copy evidence, and its columns lose frequent values, ranges and distinct counts, read from every
  row; code lists stay (the column's vocabulary, needed to write the SQL).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.permissions import Principal

#: (schema or None for the default schema, table) → may the reader see it.
MaySee = Callable[[str | None, str], bool]
#: (schema, table, column names) → the masked ones among them, with their mask (hide, null, redact, hash).
MaskLookup = Callable[[str | None, str, Sequence[str]], Mapping[str, str]]
#: (schema, table) → does a row filter apply to the reader's reads of it.
FilterLookup = Callable[[str | None, str], bool]

FILTERED = "filtered for you"
_ROW_VALUE_STATS = ("min", "max", "distinct")
_VALUE_KEYS = ("stats", "frequent", "values", "codes", "codes_source", "codes_from", "watch")


@dataclass(frozen=True)
class DataPolicies:
    """The reader's column masks and row filters, table by table."""

    masks: MaskLookup
    filtered: FilterLookup


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


def _names(columns: object) -> list[str]:
    return [str(c) for c in columns] if isinstance(columns, list) else []


def _mentions(text: object, names: set[str]) -> bool:
    words = {w.casefold() for w in re.findall(r"\w+", str(text))}
    return bool(words & names)


def _hides_target(policies: DataPolicies, target: object, columns: object) -> bool:
    schema, name = split_qualified(target)
    wanted = _names(columns)
    return any(kind == "hide" for kind in policies.masks(schema, name, wanted).values())


def _masked_column(column: dict[str, Any], kind: str) -> dict[str, Any]:
    shown = {k: v for k, v in column.items() if k not in _VALUE_KEYS}
    shown["masked"] = kind
    return shown


def _apply_masks(shown: dict[str, Any], policies: DataPolicies) -> None:
    schema, table = shown.get("schema") or None, str(shown.get("table") or "")
    columns = shown.get("columns") or []
    masks = policies.masks(schema, table, [str(c.get("name")) for c in columns])
    hidden = {name.casefold() for name, kind in masks.items() if kind == "hide"}
    masked = {name.casefold(): kind for name, kind in masks.items()}

    def hides(names: object) -> bool:
        return any(n.casefold() in hidden for n in _names(names))

    shown["columns"] = [
        _masked_column(c, masked[str(c.get("name")).casefold()]) if str(c.get("name")).casefold() in masked else c
        for c in columns
        if str(c.get("name")).casefold() not in hidden
    ]
    if hides(shown.get("primary_key")):
        shown["purpose"] = "; ".join(
            p for p in str(shown.get("purpose") or "").split("; ") if not p.startswith("one row per ")
        )
    shown["primary_key"] = [k for k in _names(shown.get("primary_key")) if k.casefold() not in hidden]
    shown["foreign_keys"] = [
        fk
        for fk in shown.get("foreign_keys") or []
        if not hides(fk.get("columns")) and not _hides_target(policies, fk.get("references"), fk.get("ref_columns"))
    ]
    shown["joins"] = [
        j
        for j in shown.get("joins") or []
        if not hides(j.get("from_columns")) and not _hides_target(policies, j.get("to"), j.get("to_columns"))
    ]
    if isinstance(shown.get("watch"), dict):
        shown["watch"] = {
            k: v for k, v in shown["watch"].items() if k.casefold() not in masked and not _mentions(v, hidden)
        }
    for column in shown["columns"]:
        if column.get("watch") and _mentions(column["watch"], hidden):
            del column["watch"]


def _apply_filters(shown: dict[str, Any], policies: DataPolicies) -> None:
    schema, table = shown.get("schema") or None, str(shown.get("table") or "")
    filtered = policies.filtered(schema, table)
    for entry in shown.get("copies") or []:
        if isinstance(entry, dict) and _filtered_link(policies, entry):
            entry["row_count"] = None
            entry["rows_filtered"] = True
    live_filtered = bool(shown.get("copy_of")) and _filtered_link(policies, {"table": shown["copy_of"]})
    if (filtered or live_filtered) and isinstance(shown.get("copy_evidence"), dict):
        shown["copy_evidence"] = {k: v for k, v in shown["copy_evidence"].items() if k != "rows"}
    if not filtered:
        return
    shown["row_count"] = None
    shown["row_count_exact"] = False
    shown["rows_filtered"] = True
    shown["sample"] = None  # its size is the table's own for a small table
    for column in shown.get("columns") or []:
        column.pop("frequent", None)
        column.pop("values", None)
        if isinstance(column.get("stats"), dict):
            column["stats"] = {k: v for k, v in column["stats"].items() if k not in _ROW_VALUE_STATS}


def _filtered_link(policies: DataPolicies, entry: dict[str, Any]) -> bool:
    schema, name = split_qualified(entry.get("table"))
    return policies.filtered(schema, name)


def _tree_copy(value: Any) -> Any:
    """A deep copy of a card's JSON tree (dicts, lists and immutable scalars), several times faster than
    `copy.deepcopy`, which keeps a memo of every object it copies; anything else is copied by `copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {key: _tree_copy(item) for key, item in value.items()}
    if kind is list:
        return [_tree_copy(item) for item in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def card_for_viewer(card: dict[str, Any], may_see: MaySee, policies: DataPolicies | None = None) -> dict[str, Any]:
    """A copy of `card` with everything about tables `may_see` refuses left out, and, with `policies`, masked
    columns and row-filtered counts as the module says."""
    shown: dict[str, Any] = _tree_copy(card)
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
    if policies is not None:
        _apply_masks(shown, policies)
        _apply_filters(shown, policies)
    return shown


def policies_of(principal: Principal, database: str) -> DataPolicies | None:
    """The principal's masks and row filters in `database`, or None when none can apply (operators, most roles)."""
    if not principal.has_data_policies(database):
        return None
    return DataPolicies(
        masks=lambda schema, table, columns: principal.column_masks(database, table, columns, schema),
        filtered=lambda schema, table: principal.row_filter(database, table, schema) is not None,
    )


def card_for_principal(principal: Principal, database: str, card: dict[str, Any]) -> dict[str, Any]:
    """`card` (of a table in source `database`) as `principal` may see it: links, masks and row counts."""
    return card_for_viewer(
        card, lambda schema, name: principal.may_see(database, name, schema), policies_of(principal, database)
    )
