from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session

from core.access.permissions import Principal, parse_user_ref, resolve_principal, role_grants
from core.config.file import ConfigFile
from core.errors import ConfigError
from core.store.models import SourceTable
from core.store.repositories import directory
from tests.support import role_names

NOW = datetime(2026, 11, 1, tzinfo=UTC)

CONFIG = ConfigFile.model_validate(
    {
        "sources": {
            "erp": {"url": "sqlite:////erp.sqlite", "aliases": ["orders"]},
            "billing": {"url": "sqlite:////billing.sqlite"},
            "hr": {"url": "sqlite:////hr.sqlite"},
        },
        "roles": {
            "sales": {"grants": [{"database": "orders", "allow": ["ORD_*", "CUST_*"], "deny": ["*_TMP"]}]},
            "finance": {"grants": [{"database": "billing"}, {"database": "erp", "allow": ["ORD_MST"]}]},
            "everyone": {
                "grants": [
                    {"database": "erp", "deny": ["EMP_*"]},
                    {"database": "billing", "deny": ["hr_private.*"]},
                    {"database": "hr", "allow": []},
                ]
            },
            "hr": {"grants": [{"database": "*", "allow": ["EMP_*"]}]},
            "admin": {"admin": True, "grants": [{"database": "*"}]},
        },
        "groups": [
            {"platform": "slack", "group": "S0SALES", "roles": ["sales"]},
            {"platform": "slack", "group": "@finance", "roles": ["finance"]},
            {"platform": "teams", "group": "0b9e-hr-group", "roles": ["hr"]},
            {"platform": "slack", "group": "S0ADMIN", "roles": ["admin"]},
        ],
        "default_role": "everyone",
    }
)


def seed(session: Session) -> None:
    users = {
        ("slack", "U_SALES"): ["S0SALES"],
        ("slack", "U_BOTH"): ["S0SALES", "S0FIN"],
        ("slack", "U_NOGROUP"): [],
        ("slack", "U_UNMAPPED"): ["S0CHESS"],
        ("teams", "aad-hr"): ["0b9e-hr-group"],
        ("slack", "U_ADMIN"): ["S0ADMIN"],
    }
    groups = {
        ("slack", "S0SALES"): "sales-team",
        ("slack", "S0FIN"): "finance",
        ("slack", "S0CHESS"): "chess",
        ("teams", "0b9e-hr-group"): None,
        ("slack", "S0ADMIN"): "admins",
    }
    user_pks = {key: directory.upsert_user(session, platform=key[0], user_id=key[1], synced_at=NOW) for key in users}
    for (platform, group_id), handle in groups.items():
        pk = directory.upsert_group(session, platform=platform, group_id=group_id, handle=handle, synced_at=NOW)
        members = [user_pks[u] for u, gs in users.items() if u[0] == platform and group_id in gs]
        directory.replace_members(session, pk, members)


def test_allow_and_deny_patterns_within_a_role(session: Session) -> None:
    seed(session)
    sales = resolve_principal(session, CONFIG, "slack", "U_SALES")
    assert role_names(sales) == ("sales",)
    assert sales.may_see("erp")
    assert sales.may_see("erp", "ORD_MST")
    assert sales.may_see("erp", "ord_dtl_h"), "patterns are case-insensitive"
    assert not sales.may_see("erp", "CUST_MST_TMP"), "deny beats allow within a role"
    assert not sales.may_see("erp", "PRD_MST"), "not in any allow pattern"
    assert not sales.may_see("billing")
    assert not sales.may_see("billing", "INV_HDR")


def test_user_in_several_groups_gets_the_union_of_roles(session: Session) -> None:
    seed(session)
    both = resolve_principal(session, CONFIG, "slack", "U_BOTH")
    assert set(role_names(both)) == {"sales", "finance"}
    assert both.may_see("billing", "INV_HDR")
    assert both.may_see("erp", "CUST_MST")
    assert both.may_see("erp", "ORD_MST")
    assert not both.may_see("erp", "CUST_MST_TMP")


def test_group_matched_by_handle(session: Session) -> None:
    seed(session)
    both = resolve_principal(session, CONFIG, "slack", "U_BOTH")
    assert "finance" in role_names(both), "mapping '@finance' matches the group whose handle is finance"


def test_default_role_for_users_in_no_mapped_group(session: Session) -> None:
    seed(session)
    for user in ("U_NOGROUP", "U_UNMAPPED", "U_NEVER_SYNCED"):
        principal = resolve_principal(session, CONFIG, "slack", user)
        assert role_names(principal) == ("everyone",)
        assert principal.may_see("erp", "ORD_MST")
        assert not principal.may_see("erp", "EMP_MST")
        assert not principal.may_see("hr"), "a grant that allows nothing does not reveal the database"
        assert not principal.may_see("hr", "EMP_MST")
    assert not resolve_principal(session, CONFIG, "slack", "U_NEVER_SYNCED").in_directory


def test_schema_qualified_patterns(session: Session) -> None:
    seed(session)
    anyone = resolve_principal(session, CONFIG, "slack", "U_NOGROUP")
    assert anyone.may_see("billing", "PAYROLL", schema="public")
    assert not anyone.may_see("billing", "PAYROLL", schema="hr_private")


def test_platforms_do_not_mix(session: Session) -> None:
    seed(session)
    hr = resolve_principal(session, CONFIG, "teams", "aad-hr")
    assert role_names(hr) == ("hr",)
    assert hr.may_see("erp", "EMP_MST")
    assert not hr.may_see("erp", "ORD_MST")
    assert role_names(resolve_principal(session, CONFIG, "slack", "aad-hr")) == ("everyone",)


def test_no_default_role_means_nothing(session: Session) -> None:
    seed(session)
    strict = CONFIG.model_copy(update={"default_role": None})
    nobody = resolve_principal(session, strict, "slack", "U_NOGROUP")
    assert nobody.roles == ()
    assert not nobody.may_see("erp")
    assert not nobody.may_see("erp", "ORD_MST")


def test_membership_sync_replaces_previous_members(session: Session) -> None:
    seed(session)
    pk = directory.upsert_group(session, platform="slack", group_id="S0SALES", handle="sales-team", synced_at=NOW)
    directory.replace_members(session, pk, [])
    assert role_names(resolve_principal(session, CONFIG, "slack", "U_SALES")) == ("everyone",)


def test_admin_flag_and_operator(session: Session) -> None:
    seed(session)
    assert resolve_principal(session, CONFIG, "slack", "U_ADMIN").is_admin
    assert not resolve_principal(session, CONFIG, "slack", "U_SALES").is_admin
    operator = Principal.for_operator()
    assert operator.is_admin
    assert operator.may_see("anything", "AT_ALL")


def test_user_references() -> None:
    assert parse_user_ref("slack:U024BE7LH") == ("slack", "U024BE7LH")
    assert parse_user_ref("teams:29:1abc:def") == ("teams", "29:1abc:def")
    for bad in ("U024BE7LH", "discord:1", "slack:"):
        with pytest.raises(ConfigError, match="PLATFORM:ID"):
            parse_user_ref(bad)


def test_unknown_platform_is_refused(session: Session) -> None:
    with pytest.raises(ConfigError, match="unknown platform"):
        resolve_principal(session, CONFIG, "discord", "x")


SCHEMAS = ConfigFile.model_validate(
    {
        "sources": {"erp": {"url": "sqlite:////erp.sqlite"}},
        "roles": {
            "orders": {"grants": [{"database": "erp", "allow": ["ORD_MST"]}]},
            "any_schema": {"grants": [{"database": "erp", "allow": ["*.ORD_MST"]}]},
            "reports": {"grants": [{"database": "erp", "allow": ["rpt.*"]}]},
            "no_staff": {"grants": [{"database": "erp", "allow": ["*"], "deny": ["EMP_*"]}]},
        },
    }
)


def test_a_pattern_without_a_schema_means_the_default_schema() -> None:
    def principal(role: str) -> Principal:
        return Principal(platform="slack", user_id="U", roles=(role_grants(SCHEMAS, role),))

    orders = principal("orders")
    assert orders.may_see("erp", "ORD_MST")
    assert not orders.may_see("erp", "ORD_MST", schema="rpt"), "a bare allow no longer reaches other schemas"
    assert principal("any_schema").may_see("erp", "ORD_MST", schema="rpt")
    assert principal("any_schema").may_see("erp", "ORD_MST")
    assert principal("reports").may_see("erp", "ANY_TABLE", schema="rpt")
    assert not principal("reports").may_see("erp", "ORD_MST")
    no_staff = principal("no_staff")
    assert no_staff.may_see("erp", "ORD_MST", schema="rpt"), "`*` alone allows every schema"
    assert not no_staff.may_see("erp", "EMP_MST", schema="hr"), "a bare deny covers the name in every schema"


def test_a_view_is_seen_only_with_everything_it_reads() -> None:
    no_staff = Principal(platform="slack", user_id="U", roles=(role_grants(SCHEMAS, "no_staff"),))

    def view(reads: object) -> SourceTable:
        return SourceTable(name="PAY_V", schema_name="", card={"kind": "view", "reads": reads})

    assert no_staff.may_see_table("erp", view([[None, "ORD_MST"]]))
    assert not no_staff.may_see_table("erp", view([[None, "ORD_MST"], [None, "EMP_MST"]]))
    assert not no_staff.may_see_table("erp", view(None)), "a view whose reads are unknown is not shown"
    assert Principal.for_operator().may_see_table("erp", view(None))
    table = SourceTable(name="ORD_MST", schema_name="", card={"kind": "table"})
    assert no_staff.may_see_table("erp", table)
