"""Orders of the sample ERP: ORD_MST, ORD_DTL_H and the two stale copies ORD_MST_BAK and ORD_MST_202312.

Every order carries a timeline of status events (ordered, paid, shipped, delivered or cancelled). The live ORD_MST row
shows the status as of the reference date; the copies show the status as of their own cutoff, so an order that was
still "shipped" on 2023-12-31 is "shipped" in ORD_MST_202312 and "delivered" in ORD_MST.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import functools
import random

from . import reference as ref
from .common import Row, Weighted, at_time, krw, month_start, next_month, rng_for, round_to
from .master_rows import Customer, Employee, Product

N_ORDERS = 20_000
DAY = 86_400
HOUR = 3_600

ORDERED, PAID, SHIPPED, DELIVERED, CANCELLED = "10", "20", "30", "40", "90"
LINE_COUNTS = Weighted([1, 2, 3, 4, 5, 6], [30, 25, 20, 12, 8, 5])
QTY_EXPENSIVE = Weighted([1, 2, 3, 5], [60, 25, 10, 5])
QTY_CHEAP = Weighted([1, 2, 3, 4, 5, 10, 20, 50], [30, 20, 12, 8, 10, 10, 6, 4])


@dataclasses.dataclass(frozen=True)
class Line:
    line_no: int
    product: Product
    qty: int
    unit_price: int
    amount: int

    def row(self, ord_no: str) -> Row:
        """The ORD_DTL_H row of this line."""
        return {
            "ORD_NO": ord_no,
            "LINE_NO": self.line_no,
            "PRD_CD": self.product.code,
            "QTY": self.qty,
            "UNIT_PRC": krw(self.unit_price),
            "AMT": krw(self.amount),
        }


@dataclasses.dataclass
class Order:
    ord_no: str
    ord_dt: dt.date
    customer: Customer
    emp_no: str | None
    pay_mthd: str
    ship_city: str
    remark: str | None
    lines: list[Line]
    events: list[tuple[dt.datetime, str]]

    @functools.cached_property
    def total(self) -> int:
        """TOT_AMT: the sum of the line amounts."""
        return sum(line.amount for line in self.lines)

    def event_time(self, status: str) -> dt.datetime | None:
        """When the order reached ``status`` (even if that is after the reference date), or None if it never did."""
        return next((when for when, stat in self.events if stat == status), None)

    def state_at(self, moment: dt.datetime) -> tuple[dt.datetime, str]:
        """The last (time, status) event at or before ``moment``."""
        return [event for event in self.events if event[0] <= moment][-1]


def end_of(day: dt.date) -> dt.datetime:
    """The last whole second of ``day``."""
    return at_time(day, DAY - 1)


REFERENCE_END = end_of(ref.REFERENCE_DATE)


def order_row(order: Order, as_of: dt.datetime) -> Row:
    """The ORD_MST row of ``order`` as it looked at ``as_of``."""
    updated, status = order.state_at(as_of)
    return {
        "ORD_NO": order.ord_no,
        "ORD_DT": order.ord_dt,
        "CUST_ID": order.customer.cust_id,
        "EMP_NO": order.emp_no,
        "STATUS_CODE": status,
        "PAY_MTHD_CD": order.pay_mthd,
        "TOT_AMT": krw(order.total),
        "SHIP_CITY": order.ship_city,
        "REMARK": order.remark,
        "REG_DTM": order.events[0][0],
        "UPD_DTM": updated,
    }


def _order_days(rng: random.Random) -> list[dt.date]:
    """N_ORDERS order dates: business grows over time, weekends are quiet, December is busy."""
    span = (ref.REFERENCE_DATE - ref.FIRST_ORDER_DATE).days + 1
    days = [ref.FIRST_ORDER_DATE + dt.timedelta(days=n) for n in range(span)]
    weights = [
        (1.0 + 0.6 * n / span)
        * (1.0, 1.0, 1.0, 1.0, 1.05, 0.45, 0.25)[day.weekday()]
        * (1.2 if day.month == 12 else 1.0)
        for n, day in enumerate(days)
    ]
    picker = Weighted(days, weights)
    return sorted(picker.pick(rng) for _ in range(N_ORDERS))


def _timeline(rng: random.Random, created: dt.datetime, pay_mthd: str) -> list[tuple[dt.datetime, str]]:
    pay_delay = {"01": (5, 600), "02": (HOUR, 3 * DAY), "03": (2 * HOUR, 5 * DAY)}.get(pay_mthd, (30, 2 * HOUR))
    paid = created + dt.timedelta(seconds=rng.randint(*pay_delay))
    shipped = paid + dt.timedelta(seconds=rng.randint(4 * HOUR, 3 * DAY))
    delivered = shipped + dt.timedelta(seconds=rng.randint(18 * HOUR, 4 * DAY))
    events = [(created, ORDERED), (paid, PAID), (shipped, SHIPPED), (delivered, DELIVERED)]
    roll = rng.random()
    if roll < 0.06:
        stage = 1 if roll < 0.027 else (2 if roll < 0.054 else 3)
        events = events[:stage]
        events.append((events[-1][0] + dt.timedelta(seconds=rng.randint(600, 2 * DAY)), CANCELLED))
    elif roll < 0.064:
        events = events[:3]  # never confirmed as delivered: stuck in "shipped" forever
    return events


def _ship_city(rng: random.Random, customer: Customer) -> str:
    city = customer.city if rng.random() < 0.85 else rng.choice(rng.choice(ref.REGIONS)[3])
    roll = rng.random()
    if roll < 0.05:
        return city.upper()
    if roll < 0.08 and city not in ref.METROPOLITAN_CITIES:
        return f"{city}-si"
    if roll < 0.09:
        return f"{city} "
    return city


def _remark(rng: random.Random, customer: Customer, events: list[tuple[dt.datetime, str]]) -> str | None:
    final = events[-1][1]
    roll = rng.random()
    if final == CANCELLED and roll < 0.4:
        return rng.choice(ref.CANCEL_REMARKS)
    if final == DELIVERED and roll < 0.005:
        return "cancel requested by phone"
    if customer.grade == "V" and roll < 0.25:
        return "VIP - rush"
    if roll < 0.7:
        return None
    if roll < 0.8:
        return ""
    return rng.choice(ref.ORDER_REMARKS)


def _lines(rng: random.Random, day: dt.date, customer: Customer, picker: Weighted[Product]) -> list[Line]:
    """Order lines; VIP customers get 5 % off, so AMT is not always QTY * UNIT_PRC."""
    count = LINE_COUNTS.pick(rng)
    lines: list[Line] = []
    for line_no, product in enumerate(picker.pick_distinct(rng, count), start=1):
        unit = product.price_on(day)
        qty = (QTY_EXPENSIVE if unit >= 100_000 else QTY_CHEAP).pick(rng)
        amount = round_to(qty * unit * 0.95, 10) if customer.grade == "V" else qty * unit
        lines.append(Line(line_no, product, qty, unit, amount))
    return lines


def _monthly_catalogues(products: list[Product]) -> dict[dt.date, Weighted[Product]]:
    """Per month, the products that could be ordered (registered before the month, not yet discontinued)."""
    catalogues: dict[dt.date, Weighted[Product]] = {}
    month = month_start(ref.FIRST_ORDER_DATE)
    while month <= ref.REFERENCE_DATE:
        following = next_month(month)
        available = [p for p in products if p.reg_dt <= month and (p.end_dt is None or p.end_dt >= following)]
        catalogues[month] = Weighted(available, [p.weight for p in available])
        month = following
    return catalogues


def generate_orders(
    seed: int, customers: list[Customer], products: list[Product], staff: list[Employee]
) -> list[Order]:
    """All orders with their lines and status timelines, in ORD_NO order."""
    rng = rng_for(seed, "orders")
    catalogues = _monthly_catalogues(products)
    registered = [c.reg_dt for c in customers]
    reps = [e for e in staff if e.dept in ref.SALES_DEPARTMENTS]
    pay_methods = Weighted([p[0] for p in ref.PAYMENT_METHODS], [p[2] for p in ref.PAYMENT_METHODS])
    created = sorted(at_time(day, rng.randint(8 * HOUR, 22 * HOUR + 1800)) for day in _order_days(rng))
    orders: list[Order] = []
    per_day = 0
    for index, when in enumerate(created):
        day = when.date()
        per_day = per_day + 1 if index and created[index - 1].date() == day else 1
        ord_no = f"O{day:%Y%m%d}{per_day:04d}"
        eligible = bisect.bisect_right(registered, day)
        customer = customers[int(eligible * rng.random() ** 1.5)]
        active = [e.emp_no for e in reps if e.hire_dt <= day and (e.retire_dt is None or e.retire_dt > day)]
        emp_no = rng.choice(active) if active and rng.random() < 0.9 else None
        pay_mthd = pay_methods.pick(rng)
        events = _timeline(rng, when, pay_mthd)
        lines = _lines(rng, day, customer, catalogues[month_start(day)])
        ship_city, remark = _ship_city(rng, customer), _remark(rng, customer, events)
        orders.append(Order(ord_no, day, customer, emp_no, pay_mthd, ship_city, remark, lines, events))
    return orders


def order_tables(orders: list[Order]) -> dict[str, list[Row]]:
    """ORD_MST, ORD_DTL_H and the stale copies ORD_MST_BAK (backup of 2023-07-01) and ORD_MST_202312."""
    backup_end, snapshot_end = end_of(ref.BACKUP_CUTOFF), end_of(ref.SNAPSHOT_CUTOFF)
    return {
        "ORD_MST": [order_row(o, REFERENCE_END) for o in orders],
        "ORD_DTL_H": [line.row(o.ord_no) for o in orders for line in o.lines],
        "ORD_MST_BAK": [order_row(o, backup_end) for o in orders if o.ord_dt <= ref.BACKUP_CUTOFF],
        "ORD_MST_202312": [order_row(o, snapshot_end) for o in orders if o.ord_dt <= ref.SNAPSHOT_CUTOFF],
    }
