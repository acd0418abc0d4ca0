"""A deterministic sample order-management ERP that looks like a real, messy enterprise database.

It is the fixture of tablescout's tests, benchmarks and demos: two databases defined once as SQLAlchemy Core MetaData
(portable types only) and filled with the same seeded rows on SQLite, MariaDB and PostgreSQL.

``erp`` (order management, cryptic upper-case names)
    CODE_MST / CODE_DTL (meaning of every code column), CUST_MST, PRD_MST, EMP_MST (salaries: a sensitive table),
    ORD_MST (STATUS_CODE 10/20/30/40/90) and ORD_DTL_H (lines; TOT_AMT = sum of AMT), RET_DTL (RET_AMT stored
    negative), SHIP_HIST (SHIP_DT is a 'YYYYMMDD' string), PAY_HIST, ORD_CHG_LOG, WH_MST, STK_INV, the yearly
    partitions SALES_2023 and SALES_2024 (disjoint years, no single SALES table) and the stale copies ORD_MST_BAK,
    ORD_MST_202312 and CUST_MST_TMP (same columns as the live table, an older subset of its rows, no keys).
``billing`` (a second system that also holds the customers)
    BILL_CUST (ERP_CUST_ID links most rows to CUST_MST), INV_HDR (totals include VAT), INV_LINE, PAYMENT, STAT_CD.

Public API:

``DATABASES``
    ``("erp", "billing")``.
``metadata_for(name) -> MetaData``
    A fresh MetaData of one database.
``build_sqlite(directory, *, seed=20240630) -> dict[str, Path]``
    Atomically (re)writes ``erp.sqlite`` and ``billing.sqlite`` in ``directory``.
``load_into(url, name, *, seed=20240630) -> None``
    Creates and fills one database's tables in an existing MariaDB / PostgreSQL (or other) database.
``row_counts(url_or_engine, name) -> dict[str, int]`` and ``content_digest(url_or_engine, name) -> str``
    Compare copies across engines: the digest is equal wherever the same rows were loaded.

Unknown database names raise ValueError listing the valid ones; connection errors propagate unchanged. The data
depends only on the seed (fixed reference date 2024-06-30, no wall clock); the default seed gives about 20,000 orders
from 2022-01 to 2024-06 and 16,000 invoices.
"""

from __future__ import annotations

from .digest import content_digest, row_counts
from .load import build_sqlite, load_into
from .schema import DATABASES, metadata_for

__all__ = ["DATABASES", "build_sqlite", "content_digest", "load_into", "metadata_for", "row_counts"]
