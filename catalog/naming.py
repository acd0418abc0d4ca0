"""What names say: common enterprise abbreviations, and the affixes that mark copies and period partitions."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.identifiers import split_identifier

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

BACKUP_WORDS = {"bak", "bk", "bkp", "backup", "old", "org", "orig", "prev", "archive", "arch", "save", "sav"}
STAGING_WORDS = {"tmp", "temp", "work", "wk", "stg", "stage", "staging", "load", "imp", "import"}
DRAFT_WORDS = {"copy", "cpy", "test", "tst", "dev", "new", "draft", "v2", "v3", "dup", "bak2", "test2"}
SNAPSHOT_WORDS = {"snap", "snapshot", "snp"}
COPY_ROLE_BY_WORD = (
    {w: "backup" for w in BACKUP_WORDS}
    | {w: "staging" for w in STAGING_WORDS}
    | {w: "draft" for w in DRAFT_WORDS}
    | {w: "snapshot" for w in SNAPSHOT_WORDS}
)
_PERIOD = re.compile(
    r"^(?:(19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])?|(19|20)\d{2}|(?:0[1-9]|1[0-2])(19|20)\d{2})$"
)
_VERSION = re.compile(r"^v\d{1,2}$")
_SEPARATOR = re.compile(r"[_\-\s.$]+")


@dataclass(frozen=True)
class Affix:
    """A name read as STEM + copy/period marker, e.g. ORD_MST_BAK → (ORD_MST, 'BAK', backup)."""

    stem: str
    marker: str
    kind: str  # "backup" | "staging" | "draft" | "snapshot" | "period"
    position: str  # "suffix" | "prefix"


def _marker_kind(marker: str) -> str | None:
    low = marker.lower()
    if low in COPY_ROLE_BY_WORD:
        return COPY_ROLE_BY_WORD[low]
    if _VERSION.match(low):
        return "draft"
    if _PERIOD.match(low):
        return "period"
    if low.isdigit() and len(low) <= 2:
        return "draft"  # ORD_MST_2, ORD_MST_01
    return None


def affixes(name: str) -> list[Affix]:
    """Every reading of `name` as a stem plus one marker (suffix or prefix), longest stem first."""
    found: list[Affix] = []
    parts = [p for p in _SEPARATOR.split(name) if p]
    if len(parts) < 2:
        match = re.match(r"^(.*?[A-Za-z])((?:19|20)\d{4,6})$", name)
        if match and _PERIOD.match(match.group(2)):
            found.append(Affix(match.group(1), match.group(2), "period", "suffix"))
        return found
    suffix = parts[-1]
    kind = _marker_kind(suffix)
    if kind is not None:
        stem = name[: name.rfind(suffix)].rstrip("_-. $")
        if stem:
            found.append(Affix(stem, suffix, kind, "suffix"))
    prefix = parts[0]
    kind = _marker_kind(prefix)
    if kind is not None and kind != "period":
        stem = name[len(prefix) :].lstrip("_-. $")
        if stem:
            found.append(Affix(stem, prefix, kind, "prefix"))
    return found


def expand_words(name: str) -> list[str]:
    return [ABBREVIATIONS.get(w, w) for w in split_identifier(name)]


def humanise(name: str) -> str:
    """`ORD_DTL_H` → 'order detail header'."""
    return " ".join(expand_words(name))
