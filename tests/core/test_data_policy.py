"""Row filters and column masks over a user's roles: union of rows, least restrictive mask, fail closed."""

from __future__ import annotations

from core.access.permissions import Principal, RoleGrants
from core.config.file import Grant

BUSAN = RoleGrants(
    "busan",
    (
        Grant(
            database="erp",
            row_filters={"ORD_MST": "SHIP_CITY = {user.city}", "ORD_*": "STATUS_CODE <> '99'"},
            column_masks={"CUST_MST.TEL_NO": "hide", "CUST_MST.EMAIL": "redact", "*.REMARK": "null"},
        ),
    ),
)
APAC = RoleGrants(
    "apac",
    (Grant(database="erp", row_filters={"ORD_MST": "REGION = 'APAC'"}, column_masks={"CUST_MST.EMAIL": "hash"}),),
)
EVERYTHING = RoleGrants("all", (Grant(database="erp"),))
ORDERS_ONLY = RoleGrants("orders", (Grant(database="erp", allow=["ORD_MST"]),))


def _user(*roles: RoleGrants, **attributes: str | tuple[str, ...]) -> Principal:
    return Principal(platform="slack", user_id="U1", roles=roles, attributes=attributes)


def test_filters_of_one_grant_all_apply_and_roles_add_rows() -> None:
    one = _user(BUSAN).row_filter("erp", "ORD_MST")
    assert one is not None
    assert one.alternatives == (("SHIP_CITY = {user.city}", "STATUS_CODE <> '99'"),)
    two = _user(BUSAN, APAC).row_filter("erp", "ORD_MST")
    assert two is not None
    assert two.alternatives == (("SHIP_CITY = {user.city}", "STATUS_CODE <> '99'"), ("REGION = 'APAC'",))


def test_a_role_granting_the_table_without_a_filter_admits_every_row() -> None:
    assert _user(BUSAN, EVERYTHING).row_filter("erp", "ORD_MST") is None
    assert _user(BUSAN, ORDERS_ONLY).row_filter("erp", "ORD_MST") is None
    assert _user(BUSAN).row_filter("erp", "CUST_MST") is None
    assert Principal.for_operator().row_filter("erp", "ORD_MST") is None


def test_a_role_that_does_not_grant_the_table_adds_no_rows() -> None:
    # ORDERS_ONLY does not grant ORD_DTL, so only BUSAN's filter counts for it.
    found = _user(BUSAN, ORDERS_ONLY).row_filter("erp", "ORD_DTL")
    assert found is not None
    assert found.alternatives == (("STATUS_CODE <> '99'",),)
    nothing = _user(ORDERS_ONLY).row_filter("erp", "ORD_DTL")
    assert nothing is not None
    assert nothing.alternatives == ()


def test_a_filter_pattern_without_a_schema_covers_every_schema() -> None:
    found = _user(BUSAN).row_filter("erp", "ORD_MST", "rpt")
    assert found is not None
    assert "SHIP_CITY = {user.city}" in found.alternatives[0]


def test_the_least_restrictive_mask_over_roles_applies() -> None:
    assert _user(BUSAN).column_mask("erp", "CUST_MST", "TEL_NO") == "hide"
    assert _user(BUSAN).column_mask("erp", "cust_mst", "email") == "redact"
    assert _user(BUSAN, APAC).column_mask("erp", "CUST_MST", "EMAIL") == "hash"
    assert _user(BUSAN, APAC).column_mask("erp", "CUST_MST", "TEL_NO") is None  # APAC shows it
    assert _user(BUSAN, EVERYTHING).column_mask("erp", "CUST_MST", "EMAIL") is None
    assert _user(BUSAN).column_mask("erp", "ORD_MST", "REMARK") == "null"
    assert _user(BUSAN).column_masks("erp", "CUST_MST", ["CUST_ID", "TEL_NO", "EMAIL"]) == {
        "TEL_NO": "hide",
        "EMAIL": "redact",
    }
    assert _user(EVERYTHING).column_masks("erp", "CUST_MST", ["TEL_NO"]) == {}
    assert not _user(EVERYTHING).has_data_policies("erp")
    assert _user(BUSAN).has_data_policies("erp")
    assert not _user(BUSAN).has_data_policies("billing")


def test_attributes_are_found_without_regard_to_case_and_empty_ones_are_missing() -> None:
    user = _user(BUSAN, City="Busan", departments=("D1", ""), empty="", none=())
    assert user.attribute("city") == "Busan"
    assert user.attribute("DEPARTMENTS") == ("D1",)
    assert user.attribute("empty") is None
    assert user.attribute("none") is None
    assert user.attribute("country") is None
