"""What happens after an order: SHIP_HIST, PAY_HIST, RET_DTL, ORD_CHG_LOG and the SALES_2023 / SALES_2024 partitions.

All of it is derived from the order timelines, so it agrees with ORD_MST: a shipment exists only for an order that
reached "shipped" by the reference date, a refund only for an order cancelled after payment, and the monthly sales
summaries add up the lines of paid, shipped and delivered orders of their year.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from . import reference as ref
from .common import Row, Weighted, krw, rng_for, round_to
from .order_rows import CANCELLED, ORDERED, PAID, REFERENCE_END, SHIPPED, Order

TRACK_DIGITS = {"CJ": 12, "HJ": 12, "LT": 13, "KP": 13, "LG": 11}
CHANGE_USERS = {PAID: "PG_IF", SHIPPED: "WMS_IF", "40": "TMS_BATCH"}


def shipment_rows(seed: int, orders: list[Order]) -> list[Row]:
    """SHIP_HIST: one row per parcel; SHIP_DT and DLV_CMPL_DT are 'YYYYMMDD' strings. About 4 % ship in two parcels."""
    rng = rng_for(seed, "shipments")
    carriers = Weighted([c[0] for c in ref.CARRIERS], [c[2] for c in ref.CARRIERS])
    parcels: list[tuple[dt.date, str, int, str, str, dt.date | None]] = []
    for order in orders:
        shipped = order.event_time(SHIPPED)
        if shipped is None or shipped > REFERENCE_END:
            continue
        delivered = order.event_time("40")
        delivered_day = delivered.date() if delivered and delivered <= REFERENCE_END else None
        carrier = carriers.pick(rng)
        count = 2 if rng.random() < 0.04 else 1
        for part in range(count):
            ship_day = shipped.date() + dt.timedelta(days=part)
            done = delivered_day + dt.timedelta(days=part) if delivered_day else None
            if ship_day > ref.REFERENCE_DATE:
                continue
            if done and done > ref.REFERENCE_DATE:
                done = None
            digits = TRACK_DIGITS[carrier]
            track = str(rng.randint(10 ** (digits - 1), 10**digits - 1))
            parcels.append((ship_day, order.ord_no, part, carrier, track, done))
    parcels.sort(key=lambda p: (p[0], p[1], p[2]))
    return [
        {
            "SHIP_SEQ": 500_000 + number,
            "ORD_NO": ord_no,
            "SHIP_DT": f"{ship_day:%Y%m%d}",
            "CARRIER_CD": carrier,
            "TRACK_NO": track,
            "DLV_CMPL_DT": f"{done:%Y%m%d}" if done else None,
        }
        for number, (ship_day, ord_no, _, carrier, track, done) in enumerate(parcels, start=1)
    ]


def payment_rows(seed: int, orders: list[Order]) -> list[Row]:
    """PAY_HIST: a 'P' row per paid order and a negative 'R' (refund) row per order cancelled after payment."""
    rng = rng_for(seed, "payments")
    entries: list[tuple[dt.datetime, str, str, str, int, str | None]] = []
    for order in orders:
        paid = order.event_time(PAID)
        if paid is None or paid > REFERENCE_END:
            continue
        approval = f"{rng.randint(0, 99_999_999):08d}" if order.pay_mthd in ("01", "04") else None
        entries.append((paid, order.ord_no, "P", order.pay_mthd, order.total, approval))
        cancelled = order.event_time(CANCELLED)
        if cancelled is not None:
            refunded = cancelled + dt.timedelta(seconds=rng.randint(3_600, 3 * 86_400))
            if refunded <= REFERENCE_END:
                entries.append((refunded, order.ord_no, "R", order.pay_mthd, -order.total, approval))
    entries.sort(key=lambda e: (e[0], e[1], e[2]))
    rows: list[Row] = []
    per_day: dict[dt.date, int] = defaultdict(int)
    for when, ord_no, pay_type, method, amount, approval in entries:
        per_day[when.date()] += 1
        rows.append(
            {
                "PAY_NO": f"PY{when:%y%m%d}{per_day[when.date()]:05d}",
                "ORD_NO": ord_no,
                "PAY_DTM": when,
                "PAY_TYPE": pay_type,
                "PAY_MTHD_CD": method,
                "PAY_AMT": krw(amount),
                "APPR_NO": approval,
            }
        )
    return rows


def return_rows(seed: int, orders: list[Order]) -> list[Row]:
    """RET_DTL: returns of delivered lines. RET_QTY is positive but RET_AMT is negative (a credit)."""
    rng = rng_for(seed, "returns")
    reasons = Weighted([r[0] for r in ref.RETURN_REASONS], [r[2] for r in ref.RETURN_REASONS])
    drafts: list[tuple[dt.date, str, int, str, int, int]] = []
    for order in orders:
        delivered = order.event_time("40")
        if delivered is None or delivered > REFERENCE_END:
            continue
        for line in order.lines:
            if rng.random() >= 0.022:
                continue
            ret_day = delivered.date() + dt.timedelta(days=rng.randint(1, 14))
            if ret_day > ref.REFERENCE_DATE:
                continue
            ret_qty = line.qty if rng.random() < 0.6 else rng.randint(1, line.qty)
            amount = line.amount if ret_qty == line.qty else round_to(line.amount * ret_qty / line.qty, 10)
            drafts.append((ret_day, order.ord_no, line.line_no, reasons.pick(rng), ret_qty, amount))
    drafts.sort(key=lambda d: (d[0], d[1], d[2]))
    rows: list[Row] = []
    per_day: dict[dt.date, int] = defaultdict(int)
    for ret_day, ord_no, line_no, reason, ret_qty, amount in drafts:
        per_day[ret_day] += 1
        recent = (ref.REFERENCE_DATE - ret_day).days < 7
        rows.append(
            {
                "RET_NO": f"R{ret_day:%Y%m%d}{per_day[ret_day]:03d}",
                "ORD_NO": ord_no,
                "LINE_NO": line_no,
                "RET_DT": ret_day,
                "RET_RSN_CD": reason,
                "RET_QTY": ret_qty,
                "RET_AMT": krw(-amount),
                "PROC_YN": "N" if recent and rng.random() < 0.6 else "Y",
            }
        )
    return rows


def change_log_rows(orders: list[Order]) -> list[Row]:
    """ORD_CHG_LOG: every status change since logging was switched on (CHANGE_LOG_START) up to the reference date."""
    start = dt.datetime.combine(ref.CHANGE_LOG_START, dt.time())
    changes: list[tuple[dt.datetime, str, str | None, str, str]] = []
    for order in orders:
        previous: str | None = None
        for when, status in order.events:
            if start <= when <= REFERENCE_END:
                if status == ORDERED:
                    user = order.emp_no or "WEB"
                elif status == CANCELLED:
                    user = order.emp_no or "CS_ADMIN"
                else:
                    user = CHANGE_USERS[status]
                changes.append((when, order.ord_no, previous, status, user))
            previous = status
    changes.sort(key=lambda c: (c[0], c[1], c[3]))
    return [
        {"LOG_SEQ": 1_000_000 + n, "LOG_DT": when, "ORD_NO": ord_no, "OLD_STAT": old, "NEW_STAT": new, "CHG_USER": user}
        for n, (when, ord_no, old, new, user) in enumerate(changes, start=1)
    ]


def sales_partitions(orders: list[Order], years: tuple[int, ...] = (2023, 2024)) -> dict[str, list[Row]]:
    """SALES_<year>: monthly quantity and amount per product and customer region, for orders that were paid and not
    cancelled by the reference date (status 20, 30 or 40); each year has its own table."""
    totals: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for order in orders:
        if order.ord_dt.year not in years:
            continue
        status = order.state_at(REFERENCE_END)[1]
        if status in (ORDERED, CANCELLED):
            continue
        month = f"{order.ord_dt:%Y%m}"
        for line in order.lines:
            bucket = totals[(month, line.product.code, order.customer.region)]
            bucket[0] += 1
            bucket[1] += line.qty
            bucket[2] += line.amount
    tables: dict[str, list[Row]] = {f"SALES_{year}": [] for year in years}
    for (month, prd_cd, region), (count, qty, amount) in sorted(totals.items()):
        tables[f"SALES_{month[:4]}"].append(
            {"SALES_YM": month, "PRD_CD": prd_cd, "REGION_CD": region, "ORD_CNT": count, "QTY": qty, "AMT": krw(amount)}
        )
    return tables
