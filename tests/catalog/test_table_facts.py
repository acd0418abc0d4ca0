"""A table's fingerprint (`catalog.table_facts.fingerprint`): what decides whether an analysis measures a table
again. Its text must stay what earlier versions stored, or every table of every source would count as changed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, replace

from catalog.connectors.base import ColumnInfo, ForeignKeyInfo, TableInfo, TableRef
from catalog.table_facts import fingerprint

ORDERS = TableInfo(
    ref=TableRef("sales", "ORD_MST"),
    columns=(
        ColumnInfo("ORD_NO", "VARCHAR(20)", "text", nullable=False, max_length=20),
        ColumnInfo("CUST_ID", "VARCHAR(10)", "text", comment="customer"),
        ColumnInfo("TOT_AMT", "NUMERIC(14, 2)", "decimal"),
    ),
    primary_key=("ORD_NO",),
    foreign_keys=(ForeignKeyInfo(("CUST_ID",), None, "CUST_MST", ("CUST_ID",)),),
    unique=(("ORD_NO", "CUST_ID"),),
    comment="order header",
    row_estimate=4750,
)


def test_the_fingerprint_is_the_text_earlier_analyses_stored() -> None:
    stored = hashlib.sha256(json.dumps(asdict(ORDERS), sort_keys=True, default=str).encode()).hexdigest()
    assert fingerprint(ORDERS) == stored


def test_the_fingerprint_changes_with_the_shape_or_the_row_estimate() -> None:
    wider = replace(ORDERS, columns=(*ORDERS.columns, ColumnInfo("ORD_DT", "DATE", "date")))
    grown = replace(ORDERS, row_estimate=4751)
    renamed = replace(ORDERS, foreign_keys=(ForeignKeyInfo(("CUST_ID",), None, "CUSTOMER", ("CUST_ID",)),))
    prints = {fingerprint(t) for t in (ORDERS, wider, grown, renamed)}
    assert len(prints) == 4
