"""Assembles the rows of both sample databases from the individual generators.

Generation is pure: the same seed gives the same rows in the same order, in any process (no wall clock, no set or
hash ordering, one ``random.Random`` per part of the data).
"""

from __future__ import annotations

from . import billing_rows, fulfilment_rows, master_rows, order_rows
from .common import TableRows


def generate(seed: int) -> dict[str, TableRows]:
    """Rows of every table of both databases: ``{"erp": {table: rows}, "billing": {table: rows}}``.

    Billing is generated together with the ERP because its customers and invoices are derived from the ERP's.
    """
    code_mst, code_dtl = master_rows.code_rows()
    cust_rows, customers = master_rows.customer_rows(seed)
    prd_rows, products = master_rows.product_rows(seed)
    emp_rows, employees = master_rows.employee_rows(seed)
    orders = order_rows.generate_orders(seed, customers, products, employees)
    erp: TableRows = {
        "CODE_MST": code_mst,
        "CODE_DTL": code_dtl,
        "CUST_MST": cust_rows,
        "PRD_MST": prd_rows,
        "EMP_MST": emp_rows,
        "WH_MST": master_rows.warehouse_rows(),
        "STK_INV": master_rows.stock_rows(seed, products),
        **order_rows.order_tables(orders),
        "RET_DTL": fulfilment_rows.return_rows(seed, orders),
        "SHIP_HIST": fulfilment_rows.shipment_rows(seed, orders),
        "PAY_HIST": fulfilment_rows.payment_rows(seed, orders),
        "ORD_CHG_LOG": fulfilment_rows.change_log_rows(orders),
        **fulfilment_rows.sales_partitions(orders),
        "CUST_MST_TMP": master_rows.customer_tmp_rows(seed, cust_rows),
    }
    billing = billing_rows.billing_tables(seed, cust_rows, customers, orders)
    return {"erp": erp, "billing": billing}
