"""The card a reader sees is a copy: nothing done to it, or while making it, changes the stored card."""

from __future__ import annotations

import copy
import json
from typing import Any

from core.cards.card_policies import DataPolicies
from core.cards.card_view import card_for_viewer


def _stored() -> dict[str, Any]:
    return {
        "database": "erp",
        "schema": None,
        "table": "ORD_MST",
        "purpose": "one row per order; refers to CUST_MST, EMP_MST",
        "primary_key": ["ORD_NO"],
        "row_count": 4750,
        "copies": [{"table": "ORD_MST_BAK", "row_count": 4700}],
        "joins": [{"to": "CUST_MST", "from_columns": ["CUST_ID"], "to_columns": ["CUST_ID"]}],
        "columns": [
            {"name": "ORD_NO", "type": "INTEGER", "key": "PK", "stats": {"min": 1, "max": 4750, "distinct": 4750}},
            {
                "name": "CARD_NO",
                "type": "VARCHAR(20)",
                "stats": {"min": "4000", "max": "4999", "distinct": 900, "nulls": 0.1},
                "frequent": [["4111", 0.2]],
                "watch": "CARD_NO is the customer's card",
            },
            {"name": "ORD_AMT", "type": "NUMERIC(14, 2)", "stats": {"min": 1.5, "max": 900.0, "distinct": 800}},
        ],
    }


def test_the_shown_card_shares_nothing_mutable_with_the_stored_card() -> None:
    stored = _stored()
    before = copy.deepcopy(stored)
    shown = card_for_viewer(stored, lambda schema, name: True)
    assert shown == {**stored, "foreign_keys": [], "referenced_by": []}
    shown["columns"][0]["stats"]["min"] = -1
    shown["copies"][0]["row_count"] = 0
    shown["joins"][0]["to_columns"].append("X")
    shown["columns"][1]["frequent"][0][1] = 0.9
    assert stored == before


def test_masks_and_filters_change_the_shown_card_only() -> None:
    stored = _stored()
    before = json.dumps(stored, sort_keys=True)
    policies = DataPolicies(
        masks=lambda schema, table, columns: {"CARD_NO": "redact"} if table == "ORD_MST" else {},
        filtered=lambda schema, table: table in ("ORD_MST", "ORD_MST_BAK"),
        may_mask=lambda schema, table: table == "ORD_MST",
    )
    shown = card_for_viewer(stored, lambda schema, name: name != "EMP_MST", policies)
    assert json.dumps(stored, sort_keys=True) == before
    assert shown["row_count"] is None
    assert shown["rows_filtered"] is True
    assert shown["copies"][0]["row_count"] is None
    card_no = next(c for c in shown["columns"] if c["name"] == "CARD_NO")
    assert card_no["masked"] == "redact"
    assert "frequent" not in card_no
    assert "stats" not in card_no
    amount = next(c for c in shown["columns"] if c["name"] == "ORD_AMT")
    assert amount["stats"] == {}  # min, max and distinct are read from every row
    assert "EMP_MST" not in shown["purpose"]


def _coded() -> dict[str, Any]:
    stored = _stored()
    stored["columns"].append(
        {
            "name": "CTGRY_CD",
            "type": "VARCHAR(4)",
            "codes": [{"code": "B20", "meaning": "Electronics", "share": 0.5}],
            "codes_source": "CODE_DTL group PRD_CTGRY",
            "codes_from": [[None, "CODE_DTL"]],
            "codes_label": "CODE_NM",
            "codes_group": "Product category",
            "codes_group_from": [None, "CODE_MST"],
        }
    )
    return stored


def _category(shown: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in shown["columns"] if c["name"] == "CTGRY_CD")


def test_a_code_groups_name_is_shown_only_to_a_reader_who_reads_the_table_naming_it() -> None:
    everyone = _category(card_for_viewer(_coded(), lambda schema, name: True))
    assert everyone["codes_group"] == "Product category"
    assert everyone["codes_group_from"] == [None, "CODE_MST"]
    assert "codes_label" not in everyone  # analysis keeps it to decide, the reader is not shown it
    # the group's names hidden: the meanings, read from the code table itself, stay
    no_names = _category(card_for_viewer(_coded(), lambda schema, name: name != "CODE_MST"))
    assert "codes_group" not in no_names
    assert "codes_group_from" not in no_names
    assert no_names["codes"][0]["meaning"] == "Electronics"
    # the code table hidden: no meaning, and no group name either
    no_codes = _category(card_for_viewer(_coded(), lambda schema, name: name != "CODE_DTL"))
    assert no_codes["codes"][0]["meaning"] is None
    assert "codes_group" not in no_codes
    # a row filter on the table naming the groups may hide the group's row
    policies = DataPolicies(
        masks=lambda schema, table, columns: {},
        filtered=lambda schema, table: table == "CODE_MST",
        may_mask=lambda schema, table: False,
    )
    filtered = _category(card_for_viewer(_coded(), lambda schema, name: True, policies))
    assert "codes_group" not in filtered
    assert filtered["codes"][0]["meaning"] == "Electronics"
