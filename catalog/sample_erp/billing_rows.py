"""Rows of the ``billing`` database, derived from the ERP customers and orders so that the two systems agree where a
real company's systems would: most ERP customers exist in BILL_CUST (often spelled differently), and every paid ERP
order since the billing go-live has an invoice whose SUPPLY_AMT equals the order's TOT_AMT (TOT_AMT adds 10 % VAT).
A few customers exist only in billing (foreign and service customers, invoiced monthly, some in USD).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from collections import defaultdict
from decimal import Decimal

from . import reference as ref
from .common import Row, TableRows, at_time, krw, random_date, rng_for
from .master_rows import Customer, company_name
from .order_rows import CANCELLED, PAID, REFERENCE_END, Order

BILLING_STATUSES = (("DR", "Draft"), ("IS", "Issued"), ("PD", "Paid"), ("OD", "Overdue"), ("VD", "Void"))
PAY_METHOD_MAP = {"01": "CARD", "02": "WIRE", "03": "VACCT", "04": "MOBILE", "05": "WIRE"}
FOREIGN_PLACES = (
    ("Singapore", "SG", "Pte. Ltd."),
    ("Tokyo", "JP", "K.K."),
    ("Osaka", "JP", "K.K."),
    ("Shanghai", "CN", "Co., Ltd."),
    ("Ho Chi Minh City", "VN", "JSC"),
    ("Los Angeles", "US", "LLC"),
)
FOREIGN_NAMES = (
    "Pacific Rim",
    "Blue Harbor",
    "Sakura",
    "Golden Lotus",
    "Evergreen",
    "Mekong",
    "Westbridge",
    "Orient Star",
)
MIGRATION_START = dt.datetime(2022, 6, 25, 2, 0, 0)


@dataclasses.dataclass
class Invoice:
    inv_dt: dt.date
    key: str
    cust_no: int
    status: str
    currency: str
    lines: list[tuple[str, int, Decimal, Decimal]]
    vat: Decimal
    erp_ord_no: str | None
    memo: str | None
    pay_method: str

    @property
    def supply(self) -> Decimal:
        return sum((line[3] for line in self.lines), Decimal("0.00"))


def _billing_name(rng: random.Random, customer: Customer) -> str:
    roll = rng.random()
    if roll < 0.1:
        return customer.name.upper()
    if roll < 0.15 and customer.is_company:
        return customer.name.replace(" Co., Ltd.", " Co Ltd").replace(" Inc.", " Inc")
    if roll < 0.2 and not customer.is_company:
        surname, given = customer.name.split(" ", 1)
        return f"{given} {surname}"
    return customer.name


def customer_rows(seed: int, erp_customers: list[Row], customers: list[Customer]) -> tuple[list[Row], dict[str, int]]:
    """BILL_CUST rows and the ERP CUST_ID -> BILL_CUST_NO map of the migrated customers."""
    rng = rng_for(seed, "billing-customers")
    drafts: list[tuple[dt.datetime, str, Row]] = []
    for erp_row, customer in zip(erp_customers, customers, strict=True):
        if rng.random() < 0.05:
            continue  # never migrated
        name = _billing_name(rng, customer)
        if customer.reg_dt < ref.BILLING_GO_LIVE:
            created = MIGRATION_START
        else:
            created = at_time(customer.reg_dt + dt.timedelta(days=rng.randint(0, 3)), rng.randint(9 * 3600, 18 * 3600))
        city = customer.city.upper() if rng.random() < 0.08 else customer.city
        active = 0 if (erp_row["USE_YN"] == "N" and rng.random() < 0.7) or rng.random() < 0.01 else 1
        tax_id: str | None = f"{rng.randint(101, 899)}-{rng.randint(10, 99)}-{rng.randint(10000, 99999)}"
        row: Row = {
            "ERP_CUST_ID": customer.cust_id,
            "CUST_NAME": name,
            "TAX_ID": tax_id if customer.is_company else None,
            "CITY": city if rng.random() > 0.03 else None,
            "COUNTRY_CD": "KR",
            "EMAIL": erp_row["EMAIL"],
            "CREATED_AT": created,
            "ACTIVE": active,
        }
        drafts.append((created, name, row))
    taken: set[str] = set()
    for number in range(120):
        created = at_time(random_date(rng, ref.BILLING_GO_LIVE, dt.date(2024, 4, 30)), rng.randint(9 * 3600, 18 * 3600))
        if number < 70:
            city, country, suffix = rng.choice(FOREIGN_PLACES)
            trade = rng.choice(("Trading", "Imports", "Distribution", "Supply"))
            name = f"{rng.choice(FOREIGN_NAMES)} {trade} {suffix}"
            name = name if name not in taken else f"{name} ({city})"
            taken.add(name)
            tax_id = None
        else:
            city, country = rng.choice(rng.choice(ref.REGIONS)[3]), "KR"
            name = company_name(rng, taken, city)
            tax_id = f"{rng.randint(101, 899)}-{rng.randint(10, 99)}-{rng.randint(10000, 99999)}"
        row = {
            "ERP_CUST_ID": None,
            "CUST_NAME": name,
            "TAX_ID": tax_id,
            "CITY": city,
            "COUNTRY_CD": country,
            "EMAIL": f"ap@{name.split()[0].lower()}.example.com",
            "CREATED_AT": created,
            "ACTIVE": 1,
        }
        drafts.append((created, name, row))
    drafts.sort(key=lambda d: (d[0], d[1], str(d[2]["ERP_CUST_ID"])))
    rows: list[Row] = []
    by_erp_id: dict[str, int] = {}
    for number, (_, _, row) in enumerate(drafts, start=100_001):
        if row["ERP_CUST_ID"] is not None:
            by_erp_id[str(row["ERP_CUST_ID"])] = number
        rows.append({"BILL_CUST_NO": number, **row})
    return rows, by_erp_id


def _order_invoices(rng: random.Random, orders: list[Order], by_erp_id: dict[str, int]) -> list[Invoice]:
    invoices: list[Invoice] = []
    for order in orders:
        paid = order.event_time(PAID)
        cust_no = by_erp_id.get(order.customer.cust_id)
        if order.ord_dt < ref.BILLING_GO_LIVE or paid is None or paid > REFERENCE_END or cust_no is None:
            continue
        cancelled = order.event_time(CANCELLED)
        age = (ref.REFERENCE_DATE - paid.date()).days
        if cancelled is not None and cancelled <= REFERENCE_END:
            status = "VD"
        elif age <= 30:
            status = "IS" if rng.random() < 0.3 else "PD"
        else:
            status = "OD" if rng.random() < 0.01 else "PD"
        lines = [(line.product.name, line.qty, krw(line.unit_price), krw(line.amount)) for line in order.lines]
        manual = rng.random() < 0.03
        memo = "manual invoice" if manual else ("tax invoice e-mailed" if rng.random() < 0.05 else None)
        invoice = Invoice(
            paid.date(), order.ord_no, cust_no, status, "KRW", lines, krw(order.total // 10),
            None if manual else order.ord_no, memo, PAY_METHOD_MAP[order.pay_mthd],
        )  # fmt: skip
        invoices.append(invoice)
    return invoices


def _service_invoices(rng: random.Random, customers: list[Row]) -> list[Invoice]:
    invoices: list[Invoice] = []
    for row in customers:
        if row["ERP_CUST_ID"] is not None:
            continue
        created, cust_no = row["CREATED_AT"], row["BILL_CUST_NO"]
        assert isinstance(created, dt.datetime)
        assert isinstance(cust_no, int)
        month = created.date().replace(day=1)
        foreign = row["COUNTRY_CD"] != "KR"
        while month < ref.REFERENCE_DATE.replace(day=1):
            month = (month + dt.timedelta(days=32)).replace(day=1)
            if rng.random() < 0.55:
                continue
            amount = Decimal(rng.randint(50_000, 900_000)) / 100 if foreign else krw(rng.randint(30, 400) * 10_000)
            inv_dt = month.replace(day=rng.choice((1, 5, 10, 25)))
            status = "PD" if (ref.REFERENCE_DATE - inv_dt).days > 30 or rng.random() < 0.4 else "IS"
            vat = Decimal("0.00") if foreign else krw(int(amount) // 10)
            invoices.append(
                Invoice(
                    inv_dt, f"S{cust_no}", cust_no, status, "USD" if foreign else "KRW",
                    [(f"Maintenance service fee {month:%Y-%m}", 1, amount, amount)], vat, None, None, "WIRE",
                )
            )  # fmt: skip
    return invoices


def _payments(
    rng: random.Random, inv_no: str, invoice: Invoice, total: Decimal
) -> list[tuple[dt.date, str, Decimal, str]]:
    if invoice.status not in ("PD", "OD"):
        return []
    delay = 0 if invoice.pay_method in ("CARD", "MOBILE") else rng.randint(0, 25)
    paid_dt = min(invoice.inv_dt + dt.timedelta(days=delay), ref.REFERENCE_DATE)
    if invoice.status == "OD":
        if rng.random() < 0.3:
            return [(paid_dt, inv_no, (total / 3).quantize(Decimal("1")), invoice.pay_method)]
        return []
    if rng.random() < 0.05 and total > 1000:
        first = (total / 2).quantize(Decimal("1"))
        second_dt = min(paid_dt + dt.timedelta(days=rng.randint(3, 20)), ref.REFERENCE_DATE)
        return [(paid_dt, inv_no, first, invoice.pay_method), (second_dt, inv_no, total - first, invoice.pay_method)]
    return [(paid_dt, inv_no, total, invoice.pay_method)]


def billing_tables(seed: int, erp_customers: list[Row], customers: list[Customer], orders: list[Order]) -> TableRows:
    """Every table of the ``billing`` database."""
    rng = rng_for(seed, "invoices")
    cust_rows, by_erp_id = customer_rows(seed, erp_customers, customers)
    invoices = _order_invoices(rng, orders, by_erp_id) + _service_invoices(rng, cust_rows)
    invoices.sort(key=lambda inv: (inv.inv_dt, inv.key))
    headers: list[Row] = []
    lines: list[Row] = []
    payments: list[tuple[dt.date, str, Decimal, str]] = []
    per_month: dict[str, int] = defaultdict(int)
    for invoice in invoices:
        month = f"{invoice.inv_dt:%y%m}"
        per_month[month] += 1
        inv_no = f"INV{month}-{per_month[month]:05d}"
        total = invoice.supply + invoice.vat
        headers.append(
            {
                "INV_NO": inv_no,
                "BILL_CUST_NO": invoice.cust_no,
                "INV_DT": invoice.inv_dt,
                "DUE_DT": invoice.inv_dt + dt.timedelta(days=30),
                "INV_STAT_CD": invoice.status,
                "SUPPLY_AMT": invoice.supply,
                "VAT_AMT": invoice.vat,
                "TOT_AMT": total,
                "CURRENCY_CD": invoice.currency,
                "ERP_ORD_NO": invoice.erp_ord_no,
                "MEMO": invoice.memo,
            }
        )
        for seq, (desc, qty, unit, amount) in enumerate(invoice.lines, start=1):
            lines.append(
                {"INV_NO": inv_no, "LINE_SEQ": seq, "ITEM_DESC": desc, "QTY": qty, "UNIT_AMT": unit, "LINE_AMT": amount}
            )
        payments.extend(_payments(rng, inv_no, invoice, total))
    payments.sort(key=lambda p: (p[0], p[1]))
    return {
        "STAT_CD": [{"STAT_CD": c, "STAT_NM": n, "SORT_NO": i} for i, (c, n) in enumerate(BILLING_STATUSES, start=1)],
        "BILL_CUST": cust_rows,
        "INV_HDR": headers,
        "INV_LINE": lines,
        "PAYMENT": [
            {"PAYMENT_ID": n, "INV_NO": inv_no, "PAID_DT": paid_dt, "PAID_AMT": amount, "PAY_MTHD_CD": method}
            for n, (paid_dt, inv_no, amount, method) in enumerate(payments, start=1)
        ],
    }
