"""Database identifiers as words: `CUST_STAT_CD` → cust stat cd, `orderDate` → order date.

Used by analysis (names, purposes, copy detection) and by search (full-text over split identifiers), so both
sides split and expand the same way.
"""

from __future__ import annotations

import re

# Abbreviations seen in ERP schemas; expanding them lets a deterministic card say what a table is for.
ABBREVIATIONS = {
    "ord": "order",
    "ords": "orders",
    "cust": "customer",
    "cst": "customer",
    "prd": "product",
    "prod": "product",
    "itm": "item",
    "mst": "master",
    "mstr": "master",
    "dtl": "detail",
    "det": "detail",
    "hdr": "header",
    "h": "header",
    "inv": "invoice",
    "stk": "stock",
    "wh": "warehouse",
    "emp": "employee",
    "dept": "department",
    "ret": "return",
    "rtn": "return",
    "ship": "shipment",
    "shp": "shipment",
    "hist": "history",
    "pay": "payment",
    "pmt": "payment",
    "amt": "amount",
    "qty": "quantity",
    "prc": "price",
    "cd": "code",
    "nm": "name",
    "no": "number",
    "num": "number",
    "dt": "date",
    "ymd": "date",
    "ym": "year-month",
    "stat": "status",
    "sts": "status",
    "grd": "grade",
    "grp": "group",
    "rsn": "reason",
    "mthd": "method",
    "tot": "total",
    "sal": "salary",
    "addr": "address",
    "tel": "phone",
    "yn": "flag",
    "chg": "change",
    "log": "log",
    "ctgry": "category",
    "cat": "category",
    "cate": "category",
    "rgn": "region",
    "acct": "account",
    "bal": "balance",
    "txn": "transaction",
    "trx": "transaction",
    "vnd": "vendor",
    "sup": "supplier",
    "po": "purchase order",
    "so": "sales order",
    "gl": "general ledger",
    "ar": "receivable",
    "ap": "payable",
    "bill": "billing",
    "rmk": "remark",
    "desc": "description",
    "reg": "registered",
    "upd": "updated",
    "crt": "created",
    "del": "deleted",
    "use": "in use",
    "sku": "stock keeping unit",
    "uom": "unit of measure",
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^0-9A-Za-z\u00C0-\uFFFF]+")
_DIGIT_EDGE = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")


def split_identifier(name: str) -> list[str]:
    """Lower-case words of an identifier, splitting on separators, camelCase and letter/digit edges."""
    words: list[str] = []
    for part in _SEPARATORS.split(name):
        if not part:
            continue
        for piece in _CAMEL.split(part):
            words.extend(w.lower() for w in _DIGIT_EDGE.split(piece) if w)
    return words


def identifier_text(name: str) -> str:
    """The identifier followed by its words, for indexing: `CUST_STAT_CD cust stat cd`."""
    words = " ".join(split_identifier(name))
    return f"{name} {words}" if words and words != name.lower() else name


def expand_words(name: str) -> list[str]:
    """Words of an identifier with common abbreviations written out: `ORD_DTL` → order, detail."""
    return [ABBREVIATIONS.get(w, w) for w in split_identifier(name)]


def humanise(name: str) -> str:
    """`ORD_DTL_H` → 'order detail header'."""
    return " ".join(expand_words(name))
