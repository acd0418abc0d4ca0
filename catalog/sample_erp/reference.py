"""Fixed reference data of the sample ERP: code lists, Korean regions and cities, name parts, product catalogue.

Everything here is static so that the generated rows depend only on the seed. Code values double as the rows of
CODE_MST / CODE_DTL, which is how a reader of the database learns what STATUS_CODE '40' means.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

#: The day the sample "was exported": no event in the data happens after the end of this day.
REFERENCE_DATE: Final = dt.date(2024, 6, 30)
#: First order date.
FIRST_ORDER_DATE: Final = dt.date(2022, 1, 1)
#: ORD_MST_BAK is a backup taken the morning after this day; ORD_MST_202312 is the month-end snapshot.
BACKUP_CUTOFF: Final = dt.date(2023, 6, 30)
SNAPSHOT_CUTOFF: Final = dt.date(2023, 12, 31)
#: ORD_CHG_LOG only has entries from the day logging was switched on.
CHANGE_LOG_START: Final = dt.date(2023, 7, 1)
#: The billing system went live on this day; older orders have no invoice.
BILLING_GO_LIVE: Final = dt.date(2022, 7, 1)

ORDER_STATUS: Final = (("10", "Ordered"), ("20", "Paid"), ("30", "Shipped"), ("40", "Delivered"), ("90", "Cancelled"))
# '50' exists in the code table but was never used by the application (USE_YN = 'N').
UNUSED_ORDER_STATUS: Final = ("50", "Exchanged")
CUSTOMER_GRADES: Final = (("V", "VIP", 5), ("G", "Gold", 15), ("S", "Silver", 30), ("N", "Normal", 50))
PAYMENT_METHODS: Final = (
    ("01", "Credit card", 45),
    ("02", "Bank transfer", 25),
    ("03", "Virtual account", 15),
    ("04", "Mobile pay", 12),
    ("05", "On account (credit)", 3),
)
RETURN_REASONS: Final = (
    ("01", "Defective item", 30),
    ("02", "Wrong item shipped", 15),
    ("03", "Changed mind", 30),
    ("04", "Damaged in transit", 15),
    ("05", "Late delivery", 10),
)
CARRIERS: Final = (
    ("CJ", "CJ Logistics", 40),
    ("HJ", "Hanjin Express", 20),
    ("LT", "Lotte Global Logistics", 20),
    ("KP", "Korea Post", 12),
    ("LG", "Logen", 8),
)
DEPARTMENTS: Final = (
    ("D10", "Sales Team 1"),
    ("D11", "Sales Team 2"),
    ("D20", "Logistics"),
    ("D30", "Finance"),
    ("D40", "Human Resources"),
    ("D50", "IT"),
    ("D60", "Customer Service"),
)
SALES_DEPARTMENTS: Final = ("D10", "D11")
#: Position code, name, monthly salary range in KRW.
POSITIONS: Final = (
    ("10", "Staff", 3_100_000, 3_900_000),
    ("20", "Assistant Manager", 3_900_000, 4_900_000),
    ("30", "Manager", 4_900_000, 6_300_000),
    ("40", "Senior Manager", 6_300_000, 8_200_000),
    ("50", "Director", 8_500_000, 12_500_000),
)

#: Administrative region code (the real Korean province codes), English name, weight, cities in that region.
REGIONS: Final = (
    ("11", "Seoul", 30, ("Seoul",)),
    ("26", "Busan", 8, ("Busan",)),
    ("27", "Daegu", 6, ("Daegu",)),
    ("28", "Incheon", 7, ("Incheon",)),
    ("29", "Gwangju", 3, ("Gwangju",)),
    ("30", "Daejeon", 3, ("Daejeon",)),
    ("31", "Ulsan", 2, ("Ulsan",)),
    ("36", "Sejong", 1, ("Sejong",)),
    ("41", "Gyeonggi-do", 24, ("Suwon", "Seongnam", "Goyang", "Yongin", "Bucheon", "Anyang", "Hwaseong", "Icheon")),
    ("43", "Chungcheongbuk-do", 2, ("Cheongju", "Chungju")),
    ("44", "Chungcheongnam-do", 3, ("Cheonan", "Asan")),
    ("47", "Gyeongsangbuk-do", 3, ("Pohang", "Gumi", "Gyeongju")),
    ("48", "Gyeongsangnam-do", 4, ("Changwon", "Gimhae", "Jinju")),
    ("50", "Jeju", 1, ("Jeju",)),
)
METROPOLITAN_CITIES: Final = frozenset(
    {"Seoul", "Busan", "Daegu", "Incheon", "Gwangju", "Daejeon", "Ulsan", "Sejong", "Jeju"}
)

COMPANY_PREFIXES: Final = (
    "Hanbit", "Daehan", "Samil", "Mirae", "Hanil", "Donga", "Saehan", "Jinyang", "Seoyoung", "Haesol",
    "Nuri", "Boram", "Gaon", "Dasom", "Hanul", "Sejin", "Daewon", "Sungwoo", "Taeyang", "Cheonji",
    "Baekdu", "Jungang", "Yeongjin", "Hyundo", "Kyungin", "Namsan", "Bukhan", "Arirang", "Sinil", "Woojin",
)  # fmt: skip
COMPANY_TRADES: Final = (
    "Trading", "Tech", "Foods", "Logistics", "Industrial", "Electronics", "Mart", "Pharm", "Systems",
    "Engineering", "Textile", "Chemical", "Construction", "Design", "Office Solutions", "Medical", "Precision",
)  # fmt: skip
COMPANY_SUFFIXES: Final = (" Co., Ltd.", " Co., Ltd.", " Co., Ltd.", " Inc.", " Corp.", "")
SURNAMES: Final = (
    "Kim", "Lee", "Park", "Choi", "Jung", "Kang", "Cho", "Yoon", "Jang", "Lim", "Han", "Oh", "Seo", "Shin",
    "Kwon", "Hwang", "Ahn", "Song", "Jeon", "Hong",
)  # fmt: skip
GIVEN_NAMES: Final = (
    "Min-jun", "Seo-yeon", "Ji-ho", "Ha-eun", "Do-yun", "Seo-jun", "Ji-woo", "Ye-jin", "Hyun-woo", "Su-bin",
    "Jae-won", "Eun-ji", "Sung-min", "Yu-na", "Dong-hyun", "Ji-hye", "Tae-yang", "Min-seo", "Jun-ho", "Da-eun",
)  # fmt: skip

#: Category code, category name, (base item, lowest price, highest price) in KRW.
PRODUCT_CATEGORIES: Final = (
    ("A10", "Office Supplies", (
        ("A4 Copy Paper 80g 2500 sheets", 21_000, 32_000), ("Ballpoint Pen Black 0.7mm 12pcs", 3_500, 9_000),
        ("Stapler Heavy Duty", 8_000, 35_000), ("File Folder A4 10pcs", 4_000, 12_000),
        ("Sticky Notes 76x76 12 pads", 5_000, 11_000), ("Whiteboard Marker 4 colors", 4_500, 9_500),
        ("Toner Cartridge TN-2480", 45_000, 89_000), ("Label Paper A4 100 sheets", 9_000, 19_000),
    )),
    ("B20", "Electronics", (
        ("27in IPS Monitor", 189_000, 420_000), ("Wireless Keyboard", 19_000, 89_000),
        ("USB-C Hub 7-port", 25_000, 69_000), ("Mono Laser Printer", 119_000, 390_000),
        ("Wireless Mouse", 9_900, 59_000), ("FHD Webcam", 29_000, 99_000),
        ("Portable SSD 1TB", 99_000, 189_000), ("Noise Cancelling Headset", 79_000, 329_000),
    )),
    ("C30", "Furniture", (
        ("Mesh Office Chair", 89_000, 490_000), ("Standing Desk 1400", 259_000, 690_000),
        ("Filing Cabinet 3-drawer", 119_000, 259_000), ("Meeting Table 1800", 189_000, 450_000),
        ("Bookshelf 5-tier", 59_000, 159_000), ("Dual Monitor Arm", 39_000, 129_000),
    )),
    ("D40", "Food & Beverage", (
        ("Drip Coffee 100 sticks", 18_000, 39_000), ("Green Tea Bags 100", 9_000, 19_000),
        ("Bottled Water 500ml x20", 6_000, 11_000), ("Instant Noodles Box of 40", 28_000, 42_000),
        ("Mixed Nuts 30 packs", 19_000, 35_000), ("Canned Tuna 12 cans", 21_000, 33_000),
    )),
    ("E50", "Household", (
        ("Hand Sanitizer 500ml", 4_000, 12_000), ("Paper Towel 12 rolls", 9_000, 19_000),
        ("Dish Soap 1L", 3_500, 8_500), ("Trash Bags 50L 100pcs", 7_000, 15_000),
        ("KF94 Mask 50pcs", 12_000, 29_000), ("Wet Tissue 10 packs", 8_000, 16_000),
    )),
    ("F60", "Industrial Parts", (
        ("Hex Bolt M8 100pcs", 6_000, 18_000), ("Safety Gloves 10 pairs", 9_000, 25_000),
        ("Cable Ties 300mm 1000pcs", 11_000, 27_000), ("Electrical Tape 10 rolls", 7_000, 16_000),
        ("Ball Bearing 6204ZZ", 2_500, 9_000), ("Safety Helmet", 12_000, 38_000),
    )),
)  # fmt: skip
PRODUCT_BRANDS: Final = ("Hanbit", "ProLine", "Daelim", "EcoPlus", "Premier", "BasicOne", "Sejin", "Kwangil")

ORDER_REMARKS: Final = (
    "call before delivery",
    "leave at security office",
    "shipped late",
    "partial shipment",
    "address changed by CS",
    "tax invoice required",
    "gift wrap please",
    "same as last order",
    "deliver after 2pm",
    "Urgent!!",
)
CANCEL_REMARKS: Final = ("cancel requested by phone", "customer cancelled - out of stock", "CANCEL", "dup order")

WAREHOUSES: Final = (
    ("W01", "Icheon Central DC", "41", "Icheon", "Y"),
    ("W02", "Busan Hub", "26", "Busan", "Y"),
    ("W03", "Daejeon Hub", "30", "Daejeon", "Y"),
    ("W04", "Gwangju Hub", "29", "Gwangju", "Y"),
    ("W05", "Incheon Port Warehouse", "28", "Incheon", "Y"),
    ("W09", "Old Seoul Warehouse (closed)", "11", "Seoul", "N"),
)


def code_groups() -> tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...]:
    """Code group, group name, (code, name, USE_YN) rows: the content of CODE_MST and CODE_DTL."""
    return (
        ("ORD_STAT", "Order status", (*((c, n, "Y") for c, n in ORDER_STATUS), (*UNUSED_ORDER_STATUS, "N"))),
        ("CUST_GRD", "Customer grade", tuple((c, n, "Y") for c, n, _ in CUSTOMER_GRADES)),
        ("REGION", "Region (province)", tuple((c, n, "Y") for c, n, _, _ in REGIONS)),
        ("PRD_CTGRY", "Product category", tuple((c, n, "Y") for c, n, _ in PRODUCT_CATEGORIES)),
        ("PAY_MTHD", "Payment method", tuple((c, n, "Y") for c, n, _ in PAYMENT_METHODS)),
        ("RET_RSN", "Return reason", tuple((c, n, "Y") for c, n, _ in RETURN_REASONS)),
        ("CARRIER", "Delivery carrier", tuple((c, n, "Y") for c, n, _ in CARRIERS)),
        ("DEPT", "Department", tuple((c, n, "Y") for c, n in DEPARTMENTS)),
        ("POS", "Job position", tuple((c, n, "Y") for c, n, _, _ in POSITIONS)),
    )
