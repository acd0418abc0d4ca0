"""A card's values and counts as one reader may know them: column masks, row filters, views over either, and the
figures their own SQL would count (SPEC §6). The half of `core.cards.card_view` that concerns values.

A card is profiled from every row, so what it says about values is the reader's to know only where their SQL would
say the same:
- A column masked `hide` is not in the card at all: not among the columns, the primary key, foreign keys, joins (from
  it, or to a column hidden in the other table), columns to watch, nor in a watch note that names it. A column masked
  `null`, `redact` or `hash` is listed (name, type, key, comment) with `masked` set and without stats, frequent
  values, codes or watch note.
- A view's columns are masked as the base columns they are computed from (the view's `column_reads`, recorded by
  analysis; a base column hidden reads as NULL through the view): `PAY` of a view over `SAL_AMT` masked `hash` is
  masked `hash`. A column of a view over masked tables whose sources are not known is `withheld`.
- Where the reader's rows differ from those analysis read (a row filter applies to the table, or it is a view over a
  filtered or masked table), its row count, sample size, ranges, distinct counts, null ratios, frequent values and
  code lists are the reader's own (`viewer_facts.TableFacts`, counted through their filters and masks) or, where
  those could not be counted, left out; of a code list only the codes whose meanings come from a code table the
  reader may read in full stay then, without shares. Copies of such a table lose their row counts and copy evidence.
- Code meanings read from a table the reader may not read in full (filtered for them, or the meaning column masked)
  are left out; the codes stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.access.row_predicates import MASK_ORDER
from core.access.viewer_facts import ColumnFacts, TableFacts

#: (schema, table, column names) → the masked ones among them, with their mask (hide, null, redact, hash).
MaskLookup = Callable[[str | None, str, Sequence[str]], Mapping[str, str]]
#: (schema, table) → a yes/no fact about the reader's reads of it.
TableLookup = Callable[[str | None, str], bool]

#: The mask of a view column over masked tables whose source columns are not known.
WITHHELD = "withheld"
FREQUENT_SHOWN = 10
#: Codes a column lists at most (as analysis keeps them, `catalog.code_values.MAX_CODES`).
CODES_SHOWN = 40
_VALUE_KEYS = (
    "stats",
    "frequent",
    "values",
    "codes",
    "codes_source",
    "codes_from",
    "codes_label",
    "codes_group",
    "codes_group_from",
    "watch",
)
#: Stats that describe how values are written, not what the rows hold.
_FORMAT_STATS = ("date_text_format",)


@dataclass(frozen=True)
class DataPolicies:
    """The reader's column masks and row filters, table by table."""

    masks: MaskLookup
    filtered: TableLookup  # does a row filter apply to the reader's reads of the table
    may_mask: TableLookup  # could some column of the table be masked for the reader (without its columns)

    def restricted(self, schema: str | None, table: str) -> bool:
        return self.filtered(schema, table) or self.may_mask(schema, table)


def split_qualified(qualified: object) -> tuple[str | None, str]:
    """`schema.TABLE` or `TABLE` (the default schema) as the card writes links."""
    schema, _, name = str(qualified).rpartition(".")
    return (schema or None), name


def _where(card: Mapping[str, Any]) -> tuple[str | None, str]:
    return (card.get("schema") or None), str(card.get("table") or "")


def _reads(card: Mapping[str, Any]) -> list[tuple[str | None, str]] | None:
    reads = card.get("reads")
    if not isinstance(reads, list):
        return None
    return [(str(schema) if schema else None, str(name)) for schema, name in reads]


def over_restricted(card: Mapping[str, Any], policies: DataPolicies) -> bool:
    """Is the card a view over a table filtered or masked for the reader (or over tables not known)?"""
    if card.get("kind") != "view":
        return False
    reads = _reads(card)
    return reads is None or any(policies.restricted(schema, name) for schema, name in reads)


def rows_differ(card: Mapping[str, Any], policies: DataPolicies) -> bool:
    """Would the reader's SQL count other rows or values than analysis did?"""
    return policies.filtered(*_where(card)) or over_restricted(card, policies)


def without_meanings(column: dict[str, Any]) -> dict[str, Any]:
    column = dict(column)
    column["codes"] = [{**c, "meaning": None} for c in column.get("codes") or []]
    column["codes_source"] = None
    column["codes_from"] = []
    for key in ("codes_label", "codes_group", "codes_group_from"):
        column.pop(key, None)
    return column


def meanings_readable(column: Mapping[str, Any], policies: DataPolicies) -> bool:
    """Does the reader read in full the table the column's code meanings came from? (Whether they may see it at
    all is `core.cards.card_view.codes_visible`.) A code table filtered for them, its meaning column masked, or a code
    view over anything restricted, would show meanings their SQL could not read."""
    read_from = column.get("codes_from")
    if "codes_from" not in column:  # analysed before `codes_from` was recorded: "CODE_DTL group ORD_STAT"
        source = column.get("codes_source")
        if not source or source == "column comment":
            return True
        read_from = [[*split_qualified(str(source).split(" group ", 1)[0])]]
    if not isinstance(read_from, list):
        return False  # a code view whose reads could not be followed
    if not read_from:
        return True  # meanings from the column's own comment, or none
    first_schema, first_table = read_from[0][0] or None, str(read_from[0][1])
    if policies.filtered(first_schema, first_table):
        return False
    label = column.get("codes_label")
    if isinstance(label, str):
        if policies.masks(first_schema, first_table, [label]):
            return False
    elif policies.may_mask(first_schema, first_table):
        return False  # cards analysed before the meaning column was recorded
    return not any(policies.restricted(str(s) if s else None, str(n)) for s, n in read_from[1:])


def _hides_target(policies: DataPolicies, target: object, columns: object) -> bool:
    schema, name = split_qualified(target)
    return any(kind == "hide" for kind in policies.masks(schema, name, _names(columns)).values())


def _names(columns: object) -> list[str]:
    return [str(c) for c in columns] if isinstance(columns, list) else []


def _mentions(text: object, names: set[str]) -> bool:
    words = {w.casefold() for w in re.findall(r"\w+", str(text))}
    return bool(words & names)


def _stricter(first: str | None, second: str | None) -> str | None:
    kinds = [k for k in (first, second) if k is not None]
    if not kinds:
        return None
    definite = [k for k in kinds if k in MASK_ORDER]
    return max(definite, key=MASK_ORDER.index) if definite else WITHHELD


def _view_masks(card: Mapping[str, Any], policies: DataPolicies, names: Sequence[str]) -> dict[str, str]:
    """Masks of a view's columns from the base columns each is computed from (`column_reads`)."""
    reads = _reads(card)
    if reads is not None and not any(policies.may_mask(schema, name) for schema, name in reads):
        return {}
    lineage = card.get("column_reads")
    found: dict[str, str] = {}
    for name in names:
        sources = lineage.get(name) if isinstance(lineage, dict) and reads is not None else None
        if not isinstance(sources, list):
            found[name] = WITHHELD
            continue
        kind: str | None = None
        for entry in sources:
            schema, table, column = (str(part) if part else None for part in entry)
            if table is None or column is None:
                kind = _stricter(kind, WITHHELD)
                continue
            base = policies.masks(schema, table, [column]).get(column)
            kind = _stricter(kind, "null" if base == "hide" else base)
        if kind is not None:
            found[name] = kind
    return found


def column_masks(card: Mapping[str, Any], policies: DataPolicies) -> dict[str, str]:
    """Column name → its mask for the reader, for the card's own table and, for a view, through its sources."""
    names = [str(c.get("name")) for c in card.get("columns") or []]
    own = dict(policies.masks(*_where(card), names))
    if card.get("kind") != "view":
        return own
    through = _view_masks(card, policies, names)
    return {n: k for n in names if (k := _stricter(own.get(n), through.get(n))) is not None}


def _masked_column(column: dict[str, Any], kind: str) -> dict[str, Any]:
    shown = {k: v for k, v in column.items() if k not in _VALUE_KEYS}
    shown["masked"] = kind
    return shown


def apply_masks(shown: dict[str, Any], policies: DataPolicies) -> None:
    columns = shown.get("columns") or []
    masks = column_masks(shown, policies)
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


def _filtered_link(policies: DataPolicies, entry: Mapping[str, Any]) -> bool:
    return policies.filtered(*split_qualified(entry.get("table")))


def apply_row_facts(shown: dict[str, Any], policies: DataPolicies, facts: TableFacts | None) -> None:
    """Counts and values of a table whose rows differ for the reader: theirs (`facts`), or left out."""
    for entry in shown.get("copies") or []:
        if isinstance(entry, dict) and _filtered_link(policies, entry):
            entry["row_count"] = None
            entry["rows_filtered"] = True
    differ = rows_differ(shown, policies)
    live_filtered = bool(shown.get("copy_of")) and _filtered_link(policies, {"table": shown["copy_of"]})
    if (differ or live_filtered) and isinstance(shown.get("copy_evidence"), dict):
        shown["copy_evidence"] = {k: v for k, v in shown["copy_evidence"].items() if k != "rows"}
    if not differ:
        return
    shown["rows_filtered"] = True
    shown["sample"] = None  # its size is the table's own for a small table
    counted = facts.rows if facts is not None else None
    shown["row_count"] = counted
    shown["row_count_exact"] = counted is not None
    for column in shown.get("columns") or []:
        if column.get("masked"):
            continue
        found = facts.columns.get(str(column.get("name"))) if facts is not None else None
        _reader_column(column, found, counted)
    for join in shown.get("joins") or []:
        join["basis"] = basis_without_figures(str(join.get("basis") or ""))


def _reader_column(column: dict[str, Any], facts: ColumnFacts | None, rows: int | None) -> None:
    column.pop("values", None)  # the value index's copy: read from every row
    stats = column.get("stats")
    kept = {k: v for k, v in stats.items() if k in _FORMAT_STATS} if isinstance(stats, dict) else {}
    if facts is not None:
        if facts.filled is not None and rows:
            kept["null_ratio"] = round(1 - facts.filled / rows, 4)
        if facts.distinct is not None:
            kept["distinct"] = facts.distinct
        if facts.low is not None and isinstance(stats, dict) and "min" in stats:
            kept["min"], kept["max"] = facts.low, facts.high
    if isinstance(stats, dict):
        column["stats"] = kept
    frequent = facts.frequent if facts is not None else None
    if "frequent" in column:
        column["frequent"] = [[v, s] for v, s in frequent[:FREQUENT_SHOWN]] if frequent is not None else []
    if column.get("codes"):
        meanings = {str(c.get("code")): c.get("meaning") for c in column["codes"]}
        if frequent is not None:
            column["codes"] = [{"code": v, "meaning": meanings.get(v), "share": s} for v, s in frequent[:CODES_SHOWN]]
        else:  # the code table's own vocabulary, which the reader may read; not which codes the rows hold
            column["codes"] = [{"code": c, "meaning": m, "share": None} for c, m in meanings.items() if m]
        if not column["codes"]:
            for key in ("codes", "codes_source", "codes_from", "codes_label"):
                column.pop(key, None)


def basis_without_figures(basis: str) -> str:
    """A join's basis without the sample figures read from every row ("100% of 33 sampled values found in X")."""
    return re.sub(r"\d+(\.\d+)?% of \d+ sampled values (found|present) in", r"values \2 in", basis)
