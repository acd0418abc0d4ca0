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
