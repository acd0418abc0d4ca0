from __future__ import annotations

from collections.abc import Mapping

from catalog.copy_detection import TableFacts, detect_roles
from core.text.naming import affixes

ORDER_COLUMNS = {"ord_no": "text", "cust_id": "integer", "ord_dt": "date", "status_code": "text", "tot_amt": "decimal"}


def facts(name: str, rows: int | None, newest: str = "2024-06-30", columns: dict[str, str] | None = None, **kw):
    return TableFacts(
        key=name,
        schema=None,
        name=name,
        kind=kw.pop("kind", "table"),
        columns=dict(columns or ORDER_COLUMNS),
        row_count=rows,
        newest={"ord_dt": newest},
        primary_key=("ord_no",),
        **kw,
    )


def containment_from(values: Mapping[tuple[str, str], float | None]):
    return lambda copy, live: values.get((copy.key, live.key))


def test_name_patterns() -> None:
    kinds = {
        n: [(a.stem, a.kind, a.position) for a in affixes(n)]
        for n in (
            "ORD_MST_BAK",
            "BAK_ORD_MST",
            "ORD_MST_202312",
            "ORD_MST_20231231",
            "CUST_MST_TMP",
            "orders_old",
            "orders_v2",
            "SALES_2023",
            "ORD_MST",
            "singer_in_concert",
        )
    }
    assert kinds["ORD_MST_BAK"] == [("ORD_MST", "backup", "suffix")]
    assert kinds["BAK_ORD_MST"] == [("ORD_MST", "backup", "prefix")]
    assert kinds["ORD_MST_202312"] == [("ORD_MST", "period", "suffix")]
    assert kinds["ORD_MST_20231231"] == [("ORD_MST", "period", "suffix")]
    assert kinds["CUST_MST_TMP"] == [("CUST_MST", "staging", "suffix")]
    assert kinds["orders_old"] == [("orders", "backup", "suffix")]
    assert kinds["orders_v2"] == [("orders", "draft", "suffix")]
    assert kinds["ORD_MST"] == []
    assert kinds["singer_in_concert"] == []


def test_backup_snapshot_and_prefix_copies() -> None:
    tables = {
        "ORD_MST": facts("ORD_MST", 20000, inbound_from={"ORD_DTL_H"}),
        "ORD_MST_BAK": facts("ORD_MST_BAK", 10798, "2023-06-30"),
        "ORD_MST_202312": facts("ORD_MST_202312", 15250, "2023-12-31"),
        "BAK_ORD_MST": facts("BAK_ORD_MST", 9000, "2023-03-31"),
    }
    contained = {(k, "ORD_MST"): 1.0 for k in tables}
    roles = detect_roles(tables, containment_from(contained))
    assert roles["ORD_MST"].role == "live"
    assert (roles["ORD_MST_BAK"].role, roles["ORD_MST_BAK"].copy_of) == ("backup", "ORD_MST")
    assert (roles["ORD_MST_202312"].role, roles["ORD_MST_202312"].copy_of) == ("snapshot", "ORD_MST")
    assert (roles["BAK_ORD_MST"].role, roles["BAK_ORD_MST"].copy_of) == ("backup", "ORD_MST")
    evidence = roles["ORD_MST_BAK"].evidence
    assert evidence["name_pattern"] == "suffix BAK"
    assert evidence["column_similarity"] == 1.0
    assert evidence["rows"] == {"copy": 10798, "live": 20000}
    assert evidence["key_containment"] == 1.0
    assert 0.9 <= evidence["confidence"] <= 1.0


def test_period_tables_without_a_live_parent_are_partitions() -> None:
    sales = {"sales_ym": "text", "prd_cd": "text", "qty": "integer", "amt": "decimal"}
    tables = {
        "SALES_2023": facts("SALES_2023", 10231, columns=sales),
        "SALES_2024": facts("SALES_2024", 5809, columns=sales),
    }
    roles = detect_roles(tables, containment_from({}))
    assert roles["SALES_2023"].role == "partition"
    assert roles["SALES_2024"].role == "partition"
    assert roles["SALES_2023"].copy_of is None
    assert roles["SALES_2023"].evidence["siblings"] == ["SALES_2024"]


def test_archive_with_a_live_parent_holding_other_rows_is_a_partition_not_a_copy() -> None:
    tables = {"ORDERS": facts("ORDERS", 5000), "ORDERS_2022": facts("ORDERS_2022", 40000, "2022-12-31")}
    roles = detect_roles(tables, containment_from({("ORDERS_2022", "ORDERS"): 0.0}))
    assert roles["ORDERS_2022"].role == "partition"
    assert roles["ORDERS"].role == "live"


def test_live_tables_are_never_demoted() -> None:
    tables = {
        "ORD_MST": facts("ORD_MST", 20000),
        # referenced by other tables: live even though its name looks like a copy
        "ORD_MST_OLD": facts("ORD_MST_OLD", 100, inbound_from={"LEGACY_LINES"}),
        # more rows and newer data than the "live" one, keys not contained
        "ORD_MST_V2": facts("ORD_MST_V2", 50000, "2024-07-31"),
        # different columns
        "ORD_MST_TMP": facts("ORD_MST_TMP", 10, columns={"ord_no": "text", "note": "text", "x": "integer"}),
        # a copy-looking name with no live table of that stem
        "CUST_BAK": facts("CUST_BAK", 10),
    }
    contained = {("ORD_MST_V2", "ORD_MST"): 0.3, ("ORD_MST_OLD", "ORD_MST"): 1.0, ("ORD_MST_TMP", "ORD_MST"): 1.0}
    roles = detect_roles(tables, containment_from(contained))
    for name in tables:
        assert roles[name].copy_of is None, name
    assert roles["ORD_MST_OLD"].evidence["not_a_copy"][0]["verdict"] == "other tables reference it"
    assert roles["ORD_MST_TMP"].evidence["not_a_copy"][0]["verdict"] == "columns differ too much"


def test_backup_with_newer_data_is_not_a_backup() -> None:
    tables = {"ORD_MST": facts("ORD_MST", 20000), "ORD_MST_BAK": facts("ORD_MST_BAK", 19000, "2024-08-01")}
    roles = detect_roles(tables, containment_from({("ORD_MST_BAK", "ORD_MST"): 0.7}))
    assert roles["ORD_MST_BAK"].copy_of is None


def test_copy_of_a_copy_points_at_the_live_table() -> None:
    tables = {
        "ORD_MST": facts("ORD_MST", 20000),
        "ORD_MST_202312": facts("ORD_MST_202312", 15000, "2023-12-31"),
        "BAK_ORD_MST_202312": facts("BAK_ORD_MST_202312", 15000, "2023-12-31"),
    }
    contained = {(k, v): 1.0 for k in tables for v in tables}
    roles = detect_roles(tables, containment_from(contained))
    assert roles["BAK_ORD_MST_202312"].copy_of == "ORD_MST"
    assert roles["BAK_ORD_MST_202312"].evidence["via"] == ["ORD_MST_202312"]


def test_views_declared_partitions_and_logs() -> None:
    log_columns = {"log_dt": "datetime", "ord_no": "text", "old_stat": "text", "new_stat": "text"}
    tables = {
        "ORD_MST": facts("ORD_MST", 20000),
        "V_ORD": facts("V_ORD", None, kind="view"),
        "ORD_MST_P1": facts("ORD_MST_P1", 100, partition_of="ORD_MST"),
        "ORD_CHG_LOG": facts("ORD_CHG_LOG", 36000, columns=log_columns),
    }
    roles = detect_roles(tables, containment_from({}))
    assert roles["V_ORD"].role == "view"
    assert roles["ORD_MST_P1"].role == "partition"
    assert roles["ORD_CHG_LOG"].role == "log"
