"""Table definitions of the ``erp`` sample database: an order-management system with cryptic upper-case names.

The definitions are portable (Integer, BigInteger, String(n), Numeric(p, s), Date, DateTime, Text, CHAR) so the same
MetaData creates equivalent tables on SQLite, MariaDB and PostgreSQL. Foreign keys are declared only on a few live
tables; returns, shipments, the change log and the sales partitions reference orders and products without a declared
key, as in many real systems. The stale copies (``*_BAK``, ``*_202312``, ``*_TMP``) look like ``CREATE TABLE AS
SELECT`` results: same columns, no keys, no comments, nothing references them.

Each table has at most one explicit Index: SQLAlchemy emits a table's indexes in set order, so two would be created in
a process-dependent order and the SQLite files of two builds would no longer be identical.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import (
    CHAR,
    BigInteger,
    Column,
    Date,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
)

#: Options that make MariaDB use InnoDB (needed for foreign keys) and full UTF-8 regardless of server defaults.
MYSQL_OPTIONS: dict[str, Any] = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}


def _money() -> Numeric[Decimal]:
    return Numeric(14, 2)


def stale_copy(source: Table, name: str) -> Table:
    """Define a table with exactly ``source``'s columns (names, types, nullability) and nothing else."""
    columns = [Column(col.name, col.type, nullable=col.nullable) for col in source.columns]
    return Table(name, source.metadata, *columns, **MYSQL_OPTIONS)


def build_erp_metadata() -> MetaData:
    """Return a fresh MetaData holding every table of the ``erp`` database."""
    md = MetaData()
    Table(
        "CODE_MST",
        md,
        Column("CODE_GRP", String(20), primary_key=True),
        Column("GRP_NM", String(100), nullable=False),
        Column("USE_YN", CHAR(1), nullable=False),
        **MYSQL_OPTIONS,
    )
    Table(
        "CODE_DTL",
        md,
        Column("CODE_GRP", String(20), ForeignKey("CODE_MST.CODE_GRP"), primary_key=True),
        Column("CODE_CD", String(10), primary_key=True),
        Column("CODE_NM", String(100), nullable=False),
        Column("SORT_ORD", Integer),
        Column("USE_YN", CHAR(1), nullable=False),
        **MYSQL_OPTIONS,
    )
    cust = Table(
        "CUST_MST",
        md,
        Column("CUST_ID", String(10), primary_key=True),
        Column("CUST_NM", String(100), nullable=False),
        Column("CUST_GRD_CD", String(2)),
        Column("REGION_CD", String(4)),
        Column("CITY_NM", String(50)),
        Column("TEL_NO", String(20)),
        Column("EMAIL", String(100)),
        Column("REG_DT", Date, nullable=False),
        Column("USE_YN", CHAR(1), nullable=False, comment="N = deleted"),
        Column("UPD_DTM", DateTime),
        comment="Customer master",
        **MYSQL_OPTIONS,
    )
    Table(
        "PRD_MST",
        md,
        Column("PRD_CD", String(12), primary_key=True),
        Column("PRD_NM", String(200), nullable=False),
        Column("CTGRY_CD", String(4)),
        Column("UNIT_PRC", _money()),
        Column("STD_COST", _money()),
        Column("USE_YN", CHAR(1), nullable=False),
        Column("REG_DT", Date),
        Column("UPD_DT", Date),
        **MYSQL_OPTIONS,
    )
    orders = Table(
        "ORD_MST",
        md,
        Column("ORD_NO", String(20), primary_key=True),
        Column("ORD_DT", Date, nullable=False),
        Column("CUST_ID", String(10), ForeignKey("CUST_MST.CUST_ID"), nullable=False),
        Column("EMP_NO", String(8)),
        Column("STATUS_CODE", String(2), nullable=False, comment="order status, see CODE_DTL ORD_STAT"),
        Column("PAY_MTHD_CD", String(2)),
        Column("TOT_AMT", _money()),
        Column("SHIP_CITY", String(50)),
        Column("REMARK", String(400)),
        Column("REG_DTM", DateTime),
        Column("UPD_DTM", DateTime),
        Index("IX_ORD_MST_01", "ORD_DT"),
        **MYSQL_OPTIONS,
    )
    Table(
        "ORD_DTL_H",
        md,
        Column("ORD_NO", String(20), ForeignKey("ORD_MST.ORD_NO"), primary_key=True),
        Column("LINE_NO", Integer, primary_key=True, autoincrement=False),
        Column("PRD_CD", String(12), ForeignKey("PRD_MST.PRD_CD"), nullable=False),
        Column("QTY", Integer, nullable=False),
        Column("UNIT_PRC", _money()),
        Column("AMT", _money()),
        **MYSQL_OPTIONS,
    )
    Table(
        "RET_DTL",
        md,
        Column("RET_NO", String(20), primary_key=True),
        Column("ORD_NO", String(20), nullable=False),
        Column("LINE_NO", Integer),
        Column("RET_DT", Date),
        Column("RET_RSN_CD", String(2)),
        Column("RET_QTY", Integer),
        Column("RET_AMT", _money(), comment="credit, stored negative"),
        Column("PROC_YN", CHAR(1)),
        **MYSQL_OPTIONS,
    )
    Table(
        "EMP_MST",
        md,
        Column("EMP_NO", String(8), primary_key=True),
        Column("EMP_NM", String(50), nullable=False),
        Column("DEPT_CD", String(4)),
        Column("POS_CD", String(2)),
        Column("HIRE_DT", Date),
        Column("RETIRE_DT", Date),
        Column("SAL_AMT", _money(), comment="monthly base salary (KRW) - confidential"),
        Column("EMAIL", String(100)),
        Column("USE_YN", CHAR(1), nullable=False),
        **MYSQL_OPTIONS,
    )
    Table(
        "SHIP_HIST",
        md,
        Column("SHIP_SEQ", BigInteger, primary_key=True, autoincrement=False),
        Column("ORD_NO", String(20), nullable=False),
        Column("SHIP_DT", String(8), comment="YYYYMMDD"),
        Column("CARRIER_CD", String(4)),
        Column("TRACK_NO", String(20)),
        Column("DLV_CMPL_DT", String(8)),
        **MYSQL_OPTIONS,
    )
    for year in (2023, 2024):
        Table(
            f"SALES_{year}",
            md,
            Column("SALES_YM", CHAR(6), primary_key=True),
            Column("PRD_CD", String(12), primary_key=True),
            Column("REGION_CD", String(4), primary_key=True),
            Column("ORD_CNT", Integer),
            Column("QTY", Integer),
            Column("AMT", _money()),
            **MYSQL_OPTIONS,
        )
    Table(
        "WH_MST",
        md,
        Column("WH_CD", String(4), primary_key=True),
        Column("WH_NM", String(100), nullable=False),
        Column("REGION_CD", String(4)),
        Column("CITY_NM", String(50)),
        Column("USE_YN", CHAR(1), nullable=False),
        **MYSQL_OPTIONS,
    )
    Table(
        "STK_INV",
        md,
        Column("WH_CD", String(4), ForeignKey("WH_MST.WH_CD"), primary_key=True),
        Column("PRD_CD", String(12), ForeignKey("PRD_MST.PRD_CD"), primary_key=True),
        Column("STK_QTY", Integer, nullable=False),
        Column("SAFE_QTY", Integer),
        Column("UPD_DT", Date),
        **MYSQL_OPTIONS,
    )
    Table(
        "PAY_HIST",
        md,
        Column("PAY_NO", String(20), primary_key=True),
        Column("ORD_NO", String(20), nullable=False),
        Column("PAY_DTM", DateTime, nullable=False),
        Column("PAY_TYPE", CHAR(1), nullable=False),
        Column("PAY_MTHD_CD", String(2)),
        Column("PAY_AMT", _money()),
        Column("APPR_NO", String(12)),
        ForeignKeyConstraint(["ORD_NO"], ["ORD_MST.ORD_NO"]),
        **MYSQL_OPTIONS,
    )
    Table(
        "ORD_CHG_LOG",
        md,
        Column("LOG_SEQ", BigInteger, primary_key=True, autoincrement=False),
        Column("LOG_DT", DateTime, nullable=False),
        Column("ORD_NO", String(20), nullable=False),
        Column("OLD_STAT", String(2)),
        Column("NEW_STAT", String(2)),
        Column("CHG_USER", String(20)),
        **MYSQL_OPTIONS,
    )
    stale_copy(orders, "ORD_MST_BAK")
    stale_copy(orders, "ORD_MST_202312")
    stale_copy(cust, "CUST_MST_TMP")
    return md
