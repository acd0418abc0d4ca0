"""Table definitions of the ``billing`` sample database: a second system that also holds the customers.

Billing was bought in, not built by the ERP team, so its conventions differ on purpose: numeric customer numbers,
``CUST_NAME`` instead of ``CUST_NM``, text payment-method codes ('CARD', 'WIRE') where the ERP uses '01', '02', an
integer active flag instead of USE_YN, and invoice totals that include 10 % VAT while ERP order totals do not.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import CHAR, Column, Date, DateTime, ForeignKey, Index, Integer, MetaData, Numeric, String, Table, Text

from .erp_schema import MYSQL_OPTIONS


def _amount() -> Numeric[Decimal]:
    return Numeric(14, 2)


def build_billing_metadata() -> MetaData:
    """Return a fresh MetaData holding every table of the ``billing`` database."""
    md = MetaData()
    Table(
        "STAT_CD",
        md,
        Column("STAT_CD", String(4), primary_key=True),
        Column("STAT_NM", String(50), nullable=False),
        Column("SORT_NO", Integer),
        **MYSQL_OPTIONS,
    )
    Table(
        "BILL_CUST",
        md,
        Column("BILL_CUST_NO", Integer, primary_key=True, autoincrement=False),
        Column("ERP_CUST_ID", String(10), comment="CUST_ID in the ERP, NULL for billing-only customers"),
        Column("CUST_NAME", String(150), nullable=False),
        Column("TAX_ID", String(12)),
        Column("CITY", String(50)),
        Column("COUNTRY_CD", CHAR(2), nullable=False),
        Column("EMAIL", String(100)),
        Column("CREATED_AT", DateTime, nullable=False),
        Column("ACTIVE", Integer, nullable=False),
        Index("IX_BILL_CUST_ERP", "ERP_CUST_ID"),
        **MYSQL_OPTIONS,
    )
    Table(
        "INV_HDR",
        md,
        Column("INV_NO", String(20), primary_key=True),
        Column("BILL_CUST_NO", Integer, ForeignKey("BILL_CUST.BILL_CUST_NO"), nullable=False),
        Column("INV_DT", Date, nullable=False),
        Column("DUE_DT", Date),
        Column("INV_STAT_CD", String(4), nullable=False),
        Column("SUPPLY_AMT", _amount()),
        Column("VAT_AMT", _amount()),
        Column("TOT_AMT", _amount(), comment="incl. VAT"),
        Column("CURRENCY_CD", CHAR(3), nullable=False),
        Column("ERP_ORD_NO", String(20)),
        Column("MEMO", Text),
        Index("IX_INV_HDR_CUST", "BILL_CUST_NO", "INV_DT"),
        **MYSQL_OPTIONS,
    )
    Table(
        "INV_LINE",
        md,
        Column("INV_NO", String(20), ForeignKey("INV_HDR.INV_NO"), primary_key=True),
        Column("LINE_SEQ", Integer, primary_key=True, autoincrement=False),
        Column("ITEM_DESC", String(200), nullable=False),
        Column("QTY", Integer),
        Column("UNIT_AMT", _amount()),
        Column("LINE_AMT", _amount()),
        **MYSQL_OPTIONS,
    )
    Table(
        "PAYMENT",
        md,
        Column("PAYMENT_ID", Integer, primary_key=True, autoincrement=False),
        Column("INV_NO", String(20), ForeignKey("INV_HDR.INV_NO"), nullable=False),
        Column("PAID_DT", Date, nullable=False),
        Column("PAID_AMT", _amount(), nullable=False),
        Column("PAY_MTHD_CD", String(10)),
        **MYSQL_OPTIONS,
    )
    return md
