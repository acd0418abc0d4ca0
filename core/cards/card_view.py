"""A table card as one reader may see it: nothing in it leads to, or comes from, a table the reader may not see,
and nothing in it shows values of a column masked for them or counts rows a row filter keeps from them.

The stored card is built for everyone; before a card (or a search candidate made from it) is shown, links to
hidden tables are dropped (joins, foreign keys, referenced-by, copies), a copy of a hidden live table no longer
names it nor carries its row count, and code meanings read from a hidden code table (or from a view over one) are
left out, keeping the codes themselves (they are the shown table's own values). Whether the table itself may be
seen is the caller's check (`Principal.may_see_table`).

With the reader's data policies (`card_policies.DataPolicies`, from `core.access.permissions.Principal`), masked
columns, row-filtered counts, views over either and code meanings from tables the reader may not read in full are
shown as `core.cards.card_policies` says, with the reader's own counts (`viewer_facts.TableFacts`) where given.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.access.viewer_facts import TableFacts
from core.cards.card_policies import (
    DataPolicies,
    apply_masks,
    apply_row_facts,
    meanings_readable,
    rows_differ,
    split_qualified,
    without_meanings,
)

if TYPE_CHECKING:
    from core.access.permissions import Principal
    from core.store.models import SourceTable

#: (schema or None for the default schema, table) → may the reader see it.
MaySee = Callable[[str | None, str], bool]

_REFERS_TO = "refers to "


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


def group_named(column: dict[str, Any], may_see: MaySee, policies: DataPolicies | None) -> dict[str, Any]:
    """`column` without its code group's name when that was read from a table the reader may not see, or may not
    read in full (a row filter may hide the group's row, a mask its name)."""
    named_in = column.get("codes_group_from")
    if "codes_group" not in column:
        return column
    if isinstance(named_in, list) and len(named_in) == 2:
        schema, name = (str(named_in[0]) if named_in[0] else None), str(named_in[1])
        if may_see(schema, name) and (policies is None or not policies.restricted(schema, name)):
            return column
    column.pop("codes_group", None)
    column.pop("codes_group_from", None)
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


def _tree_copy(value: Any) -> Any:
    """A deep copy of a card's JSON tree: a pickle round trip, done in C, twice as fast as copying it dict by dict
    in Python and several times faster than `copy.deepcopy` (a search copies every card it shows)."""
    return pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))  # noqa: S301 (bytes made on this line)


def card_for_viewer(
    card: dict[str, Any],
    may_see: MaySee,
    policies: DataPolicies | None = None,
    facts: TableFacts | None = None,
) -> dict[str, Any]:
    """A copy of `card` with everything about tables `may_see` refuses left out, and, with `policies`, masked
    columns, row-filtered counts (the reader's own, `facts`, where given) and code meanings as the module says."""
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
        group_named(c, may_see, policies)
        if not c.get("codes") or (codes_visible(c, may_see) and (policies is None or meanings_readable(c, policies)))
        else without_meanings(c)
        for c in shown.get("columns") or []
    ]
    if policies is not None:
        apply_masks(shown, policies)
        apply_row_facts(shown, policies, facts)
    # What analysis keeps to decide the above, not part of what a reader is shown: it names the columns behind a
    # view and the column a code table keeps its meanings in, which may be hidden from them.
    shown.pop("column_reads", None)
    for column in shown.get("columns") or []:
        column.pop("codes_label", None)
    return shown


def policies_of(principal: Principal, database: str) -> DataPolicies | None:
    """The principal's masks and row filters in `database`, or None when none can apply (operators, most roles)."""
    if not principal.has_data_policies(database):
        return None
    return DataPolicies(
        masks=lambda schema, table, columns: principal.column_masks(database, table, columns, schema),
        filtered=lambda schema, table: principal.row_filter(database, table, schema) is not None,
        may_mask=lambda schema, table: principal.may_mask(database, table, schema),
    )


def card_for_principal(
    principal: Principal, database: str, card: dict[str, Any], facts: TableFacts | None = None
) -> dict[str, Any]:
    """`card` (of a table in source `database`) as `principal` may see it: links, masks and row counts (their own,
    `facts`, where given)."""
    return card_for_viewer(
        card, lambda schema, name: principal.may_see(database, name, schema), policies_of(principal, database), facts
    )


def rows_differ_for(principal: Principal, database: str, row: SourceTable) -> bool:
    """Would `principal`'s SQL read other rows of analysed table `row` than analysis did (a row filter, or a view
    over filtered or masked tables)? Reads the row's card kind and view reads, not the card itself."""
    policies = policies_of(principal, database)
    if policies is None:
        return False
    if "card" in row.__dict__ or "card_kind" not in row.__dict__:
        card = row.card or {}
        kind, reads = card.get("kind"), card.get("reads")
    else:
        kind, reads = row.card_kind, row.view_reads
    return rows_differ({"schema": row.schema_name or None, "table": row.name, "kind": kind, "reads": reads}, policies)
