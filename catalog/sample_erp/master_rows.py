"""Rows of the ERP master tables: codes, customers, products, employees, warehouses and stock.

The generators return both the rows to insert and small records (:class:`Customer`, :class:`Product`,
:class:`Employee`) that the order generator needs, such as when a product was discontinued.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random

from . import reference as ref
from .common import Row, Weighted, at_time, krw, random_date, rng_for, round_to

N_CUSTOMERS = 2_000
N_PRODUCTS = 300
N_EMPLOYEES = 80

AREA_CODES = {
    "11": "02", "26": "051", "27": "053", "28": "032", "29": "062", "30": "042", "31": "052",
    "36": "044", "41": "031", "43": "043", "44": "041", "47": "054", "48": "055", "50": "064",
}  # fmt: skip
DEPARTMENT_SIZES = {"D10": 18, "D11": 16, "D20": 10, "D30": 8, "D40": 5, "D50": 9, "D60": 14}


@dataclasses.dataclass(frozen=True)
class Customer:
    cust_id: str
    name: str
    grade: str
    region: str
    city: str
    reg_dt: dt.date
    is_company: bool


@dataclasses.dataclass(frozen=True)
class Product:
    code: str
    name: str
    category: str
    price: int
    reg_dt: dt.date
    end_dt: dt.date | None
    weight: float

    def price_on(self, day: dt.date) -> int:
        """List price on ``day``: prices went up about 5 % every January, the current price is the 2024 one."""
        years_back = ref.REFERENCE_DATE.year - day.year
        return self.price if years_back <= 0 else round_to(self.price / 1.05**years_back, 100)


@dataclasses.dataclass(frozen=True)
class Employee:
    emp_no: str
    dept: str
    hire_dt: dt.date
    retire_dt: dt.date | None


def code_rows() -> tuple[list[Row], list[Row]]:
    """CODE_MST and CODE_DTL rows."""
    groups: list[Row] = []
    details: list[Row] = []
    for group, group_name, codes in ref.code_groups():
        groups.append({"CODE_GRP": group, "GRP_NM": group_name, "USE_YN": "Y"})
        for order, (code, name, use_yn) in enumerate(codes, start=1):
            details.append(
                {"CODE_GRP": group, "CODE_CD": code, "CODE_NM": name, "SORT_ORD": order * 10, "USE_YN": use_yn}
            )
    return groups, details


def person_name(rng: random.Random) -> tuple[str, str]:
    """A romanised Korean name as (surname, given name)."""
    return rng.choice(ref.SURNAMES), rng.choice(ref.GIVEN_NAMES)


def company_name(rng: random.Random, taken: set[str], city: str) -> str:
    """A romanised Korean company name not yet in ``taken`` (a clash becomes a branch of the city), then taken."""
    name = f"{rng.choice(ref.COMPANY_PREFIXES)} {rng.choice(ref.COMPANY_TRADES)}{rng.choice(ref.COMPANY_SUFFIXES)}"
    if name in taken:
        name = f"{name} ({city} Branch)"
    taken.add(name)
    return name


def customer_rows(seed: int) -> tuple[list[Row], list[Customer]]:
    """CUST_MST rows; customer ids are numbered in registration order."""
    rng = rng_for(seed, "customers")
    regions = Weighted([r for r in ref.REGIONS], [r[2] for r in ref.REGIONS])
    grades = Weighted([g[0] for g in ref.CUSTOMER_GRADES], [g[2] for g in ref.CUSTOMER_GRADES])
    taken: set[str] = set()
    drafts = []
    for _ in range(N_CUSTOMERS):
        region_cd, _, _, cities = regions.pick(rng)
        city = rng.choice(cities)
        if rng.random() < 0.35:
            reg_dt = random_date(rng, dt.date(2018, 1, 1), dt.date(2021, 12, 31))
        else:
            reg_dt = random_date(rng, ref.FIRST_ORDER_DATE, ref.REFERENCE_DATE - dt.timedelta(days=10))
        is_company = rng.random() < 0.75
        if is_company:
            name = company_name(rng, taken, city)
            email = f"order@{name.split()[0].lower()}{name.split()[1].lower()}.co.kr" if rng.random() < 0.8 else None
            tel = f"{AREA_CODES[region_cd]}-{rng.randint(200, 9999)}-{rng.randint(0, 9999):04d}"
        else:
            surname, given = person_name(rng)
            name = f"{surname} {given}"
            mailbox = f"{given.replace('-', '').lower()}{rng.randint(70, 99)}"
            email = f"{mailbox}@{rng.choice(('naver.com', 'gmail.com', 'daum.net', 'kakao.com'))}"
            tel = f"010-{rng.randint(2000, 9999)}-{rng.randint(0, 9999):04d}"
        drafts.append((reg_dt, name, grades.pick(rng), region_cd, city, tel, email, is_company, rng.random()))
    drafts.sort(key=lambda d: d[0])
    rows: list[Row] = []
    customers: list[Customer] = []
    for number, (reg_dt, name, grade, region_cd, city, tel, email, is_company, roll) in enumerate(drafts, 1):
        cust_id = f"C{number:06d}"
        updated = None
        if roll < 0.7:
            upd_day = random_date(rng, reg_dt, ref.REFERENCE_DATE)
            updated = at_time(upd_day, rng.randint(9 * 3600, 19 * 3600))
        rows.append(
            {
                "CUST_ID": cust_id,
                "CUST_NM": name,
                "CUST_GRD_CD": grade,
                "REGION_CD": region_cd,
                "CITY_NM": city,
                "TEL_NO": tel if rng.random() < 0.93 else None,
                "EMAIL": email,
                "REG_DT": reg_dt,
                "USE_YN": "N" if rng.random() < 0.04 else "Y",
                "UPD_DTM": updated,
            }
        )
        customers.append(Customer(cust_id, name, grade, region_cd, city, reg_dt, is_company))
    return rows, customers


def customer_tmp_rows(seed: int, customers: list[Row]) -> list[Row]:
    """CUST_MST_TMP: a working copy made in February 2023 from part of the customers, a few names hand-edited."""
    rng = rng_for(seed, "customer-tmp")
    copied: list[Row] = []
    for row in customers:
        reg_dt = row["REG_DT"]
        assert isinstance(reg_dt, dt.date)
        if reg_dt > dt.date(2022, 12, 31) or rng.random() >= 0.3:
            continue
        copy = dict(row)
        if rng.random() < 0.1:
            name = str(row["CUST_NM"])
            copy["CUST_NM"] = rng.choice(
                (name.upper(), f"{name} (old)", name.replace(" Co., Ltd.", ""), f"TEST {name}", f"{name} - dup?")
            )
            copy["UPD_DTM"] = at_time(dt.date(2023, 2, 14), rng.randint(10 * 3600, 18 * 3600))
        elif isinstance(row["UPD_DTM"], dt.datetime) and row["UPD_DTM"].date() > dt.date(2023, 2, 13):
            copy["UPD_DTM"] = None
        copied.append(copy)
    return copied


def product_rows(seed: int) -> tuple[list[Row], list[Product]]:
    """PRD_MST rows; about 8 % of the older products are discontinued (USE_YN = 'N')."""
    rng = rng_for(seed, "products")
    categories = Weighted(list(ref.PRODUCT_CATEGORIES), [22, 20, 10, 18, 18, 12])
    rows: list[Row] = []
    products: list[Product] = []
    for number in range(1, N_PRODUCTS + 1):
        category, _, items = categories.pick(rng)
        item, low, high = rng.choice(items)
        name = f"{rng.choice(ref.PRODUCT_BRANDS)} {item}"
        if category in ("B20", "C30", "F60"):
            name += f" {rng.choice('ADKMPSTX')}{rng.randint(1, 9)}{rng.choice(('00', '10', '20', '50'))}"
        price = round_to(rng.uniform(low, high), 100)
        if rng.random() < 0.3:
            price -= 100
        if rng.random() < 0.6:
            reg_dt = random_date(rng, dt.date(2019, 3, 1), dt.date(2021, 12, 31))
        else:
            reg_dt = random_date(rng, ref.FIRST_ORDER_DATE, dt.date(2024, 5, 31))
        end_dt = None
        if reg_dt < dt.date(2023, 1, 1) and rng.random() < 0.08:
            end_dt = random_date(rng, max(reg_dt + dt.timedelta(days=120), dt.date(2022, 6, 1)), dt.date(2024, 3, 31))
        code = f"P{category[0]}{number:04d}"
        rows.append(
            {
                "PRD_CD": code,
                "PRD_NM": name,
                "CTGRY_CD": category,
                "UNIT_PRC": krw(price),
                "STD_COST": krw(round_to(price * rng.uniform(0.55, 0.8), 10)),
                "USE_YN": "N" if end_dt else "Y",
                "REG_DT": reg_dt,
                "UPD_DT": end_dt or (dt.date(2024, 1, 2) if reg_dt.year < 2024 else None),
            }
        )
        products.append(Product(code, name, category, price, reg_dt, end_dt, min(rng.paretovariate(1.3), 25.0)))
    return rows, products


def employee_rows(seed: int) -> tuple[list[Row], list[Employee]]:
    """EMP_MST rows, including the confidential monthly salary SAL_AMT."""
    rng = rng_for(seed, "employees")
    drafts = []
    for dept, size in DEPARTMENT_SIZES.items():
        for _ in range(size):
            hire_dt = random_date(rng, dt.date(2008, 1, 1), dt.date(2024, 3, 1))
            drafts.append((hire_dt, dept, *person_name(rng), rng.random()))
    drafts.sort(key=lambda d: (d[0], d[1]))
    rows: list[Row] = []
    employees: list[Employee] = []
    per_year: dict[int, int] = {}
    for hire_dt, dept, surname, given, roll in drafts:
        per_year[hire_dt.year] = per_year.get(hire_dt.year, 0) + 1
        emp_no = f"{hire_dt.year}{per_year[hire_dt.year]:03d}"
        tenure = (ref.REFERENCE_DATE - hire_dt).days / 365.25
        level = min(len(ref.POSITIONS) - 1, int(tenure / 3.2 + rng.uniform(-0.5, 0.5)))
        pos_cd, _, low, high = ref.POSITIONS[max(level, 0)]
        retire_dt = None
        if roll < 0.1 and hire_dt < dt.date(2023, 1, 1):
            retire_dt = random_date(rng, hire_dt + dt.timedelta(days=200), dt.date(2024, 5, 31))
        rows.append(
            {
                "EMP_NO": emp_no,
                "EMP_NM": f"{surname} {given}",
                "DEPT_CD": dept,
                "POS_CD": pos_cd,
                "HIRE_DT": hire_dt,
                "RETIRE_DT": retire_dt,
                "SAL_AMT": krw(round_to(rng.uniform(low, high), 10_000)),
                "EMAIL": f"{given.replace('-', '').lower()}.{surname.lower()}@hbdist.co.kr",
                "USE_YN": "N" if retire_dt else "Y",
            }
        )
        employees.append(Employee(emp_no, dept, hire_dt, retire_dt))
    return rows, employees


def warehouse_rows() -> list[Row]:
    """WH_MST rows; one warehouse is closed."""
    return [
        {"WH_CD": code, "WH_NM": name, "REGION_CD": region, "CITY_NM": city, "USE_YN": use_yn}
        for code, name, region, city, use_yn in ref.WAREHOUSES
    ]


def stock_rows(seed: int, products: list[Product]) -> list[Row]:
    """STK_INV rows: stock of the active products in the open warehouses as of the reference date."""
    rng = rng_for(seed, "stock")
    rows: list[Row] = []
    for wh_cd, *_, use_yn in ref.WAREHOUSES:
        share = 1.0 if wh_cd == "W01" else 0.55
        for product in products:
            if use_yn != "Y" or product.end_dt is not None or rng.random() >= share:
                continue
            safe = rng.choice((0, 5, 10, 20, 50))
            rows.append(
                {
                    "WH_CD": wh_cd,
                    "PRD_CD": product.code,
                    "STK_QTY": max(0, int(rng.gauss(safe * 3 + 20, 25))),
                    "SAFE_QTY": safe or None,
                    "UPD_DT": ref.REFERENCE_DATE - dt.timedelta(days=rng.randint(0, 45)),
                }
            )
    return rows
