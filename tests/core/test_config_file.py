from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ConfigError
from tests.support import load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tablescout.yaml"
    path.write_text(text)
    return path


def test_missing_file_is_an_empty_configuration(tmp_path: Path) -> None:
    config = load_config(tmp_path / "absent.yaml")
    assert config.sources == {}
    assert config.roles == {}
    assert config.default_role is None


def test_valid_file_with_sources_roles_and_groups(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
sources:
  erp:
    url: sqlite:////data/erp.sqlite
    aliases: [orders]
roles:
  analyst:
    grants:
      - database: orders
        deny: ["EMP_*"]
groups:
  - platform: slack
    group: "@data-team"
    roles: [analyst]
default_role: analyst
""",
    )
    config = load_config(path)
    assert config.source_for("ORDERS") == "erp"
    assert config.roles["analyst"].grants[0].allow == ["*"]
    assert config.groups[0].roles == ["analyst"]


def test_unknown_key_names_file_line_and_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
roles:
  analyst:
    grants:
      - database: erp
        alow: ["ORD_*"]
""",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert f"{path}:5: roles.analyst.grants.0.alow: unknown key" in str(info.value)


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write(tmp_path, "sources: {}\ndefault_roles: analyst\n")
    with pytest.raises(ConfigError, match=r"tablescout.yaml:2: default_roles: unknown key"):
        load_config(path)


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "sources:\n  erp:\n    url: [unclosed\n")
    with pytest.raises(ConfigError, match=r"tablescout.yaml:\d+: not valid YAML"):
        load_config(path)


def test_a_list_at_top_level_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "- sources\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config(path)


def test_undefined_role_in_group_mapping_and_default(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
roles:
  analyst: {}
groups:
  - platform: slack
    group: S0123
    roles: [analyst, auditor]
default_role: guest
""",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert f"{path}:6: groups.0.roles: role 'auditor' is not defined under roles" in message
    assert f"{path}:7: default_role: role 'guest' is not defined under roles" in message


def test_wrong_type_and_bad_platform(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
roles:
  analyst:
    admin: sometimes
groups:
  - platform: discord
    group: x
    roles: []
""",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert ":3: roles.analyst.admin:" in message
    assert ":5: groups.0.platform:" in message


def test_alias_clash_between_sources(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
sources:
  erp:
    url: sqlite:////a.sqlite
    aliases: [billing]
  billing:
    url: sqlite:////b.sqlite
""",
    )
    with pytest.raises(ConfigError, match="'billing' is used by both 'erp' and 'billing'"):
        load_config(path)


def test_bad_source_name(tmp_path: Path) -> None:
    path = write(tmp_path, "sources:\n  'my erp':\n    url: sqlite:////a.sqlite\n")
    with pytest.raises(ConfigError, match="must start with a letter"):
        load_config(path)


def test_unreadable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "tablescout.yaml"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ConfigError, match="cannot read the configuration file"):
        load_config(path)


GRANT_HEAD = "roles:\n  r:\n    grants:\n      - database: erp\n"
ROW_POLICY = """\
roles:
  busan_sales:
    grants:
      - database: erp
        allow: ["*"]
        row_filters:
          ORD_MST: "SHIP_CITY = {user.city}"
          "SALES_*": "REGION_CD = 'KR-26'"
          CODE_DTL: "CODE_GRP IN {user.groups} AND USE_YN = 'Y'"
        column_masks:
          CUST_MST.TEL_NO: hide
          CUST_MST.EMAIL: redact
          "hr.EMP_*.SAL_*": "null"
          "*.RRN_NO": hash
"""


def test_row_filters_and_column_masks_in_the_documented_shape(tmp_path: Path) -> None:
    grant = load_config(write(tmp_path, ROW_POLICY)).roles["busan_sales"].grants[0]
    assert grant.row_filters["ORD_MST"] == "SHIP_CITY = {user.city}"
    assert grant.row_filters["SALES_*"] == "REGION_CD = 'KR-26'"
    assert grant.column_masks == {
        "CUST_MST.TEL_NO": "hide",
        "CUST_MST.EMAIL": "redact",
        "hr.EMP_*.SAL_*": "null",
        "*.RRN_NO": "hash",
    }


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('ORD_MST: "SHIP_CITY"', "must be a condition"),
        ('ORD_MST: "CUST_ID IN (SELECT CUST_ID FROM CUST_MST)"', "no subqueries"),
        ('ORD_MST: "o.SHIP_CITY = 1"', "without a table"),
        ('ORD_MST: "SHIP_CITY = {user.city"', "{user.NAME}"),
        ('ORD_MST: "SHIP_CITY = = 1"', "does not parse"),
        ('ORD_MST: "SHIP_CITY = 1; DROP TABLE x"', "one SQL condition"),
        ('ORD_MST: "count(*) > 0"', "aggregates"),
        ('a.b.c: "X = 1"', "table pattern"),
        ('ORD_MST: ""', "must be an SQL condition"),
    ],
)
def test_a_bad_row_filter_names_file_line_and_key(tmp_path: Path, line: str, problem: str) -> None:
    path = write(
        tmp_path, f"roles:\n  r:\n    grants:\n      - database: erp\n        row_filters:\n          {line}\n"
    )
    key = line.split(":")[0]
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert f"{path}:6: roles.r.grants.0.row_filters.{key}: " in message
    assert problem in message
    assert len(message.splitlines()) == 2


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("CUST_MST.TEL_NO: blur", "Input should be 'hide', 'null', 'redact' or 'hash'"),
        ("CUST_MST: hide", "a column mask is keyed TABLE.COLUMN or schema.TABLE.COLUMN"),
        ("a.b.c.d: hide", "a column mask is keyed TABLE.COLUMN or schema.TABLE.COLUMN"),
    ],
)
def test_a_bad_column_mask_names_file_line_and_key(tmp_path: Path, line: str, problem: str) -> None:
    path = write(
        tmp_path, f"roles:\n  r:\n    grants:\n      - database: erp\n        column_masks:\n          {line}\n"
    )
    key = line.split(":")[0]
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert f"{path}:6: roles.r.grants.0.column_masks.{key}: {problem}" in str(info.value)


def test_a_placeholder_inside_a_string_is_text_not_an_attribute(tmp_path: Path) -> None:
    from core.access.row_predicates import parse_predicate

    assert parse_predicate("REMARK <> '{user.city}' AND SHIP_CITY = {user.city}").attributes == ("city",)
    assert parse_predicate("DEPT_CD IN {user.departments}").lists == frozenset({0})
