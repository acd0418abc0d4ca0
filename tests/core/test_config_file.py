from __future__ import annotations

from pathlib import Path

import pytest

from core.config_file import load_config_file
from core.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tablescout.yaml"
    path.write_text(text)
    return path


def test_missing_file_is_an_empty_configuration(tmp_path: Path) -> None:
    config = load_config_file(tmp_path / "absent.yaml")
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
    config = load_config_file(path)
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
        load_config_file(path)
    assert f"{path}:5: roles.analyst.grants.0.alow: unknown key" in str(info.value)


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write(tmp_path, "sources: {}\ndefault_roles: analyst\n")
    with pytest.raises(ConfigError, match=r"tablescout.yaml:2: default_roles: unknown key"):
        load_config_file(path)


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "sources:\n  erp:\n    url: [unclosed\n")
    with pytest.raises(ConfigError, match=r"tablescout.yaml:\d+: not valid YAML"):
        load_config_file(path)


def test_a_list_at_top_level_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "- sources\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config_file(path)


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
        load_config_file(path)
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
        load_config_file(path)
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
        load_config_file(path)


def test_bad_source_name(tmp_path: Path) -> None:
    path = write(tmp_path, "sources:\n  'my erp':\n    url: sqlite:////a.sqlite\n")
    with pytest.raises(ConfigError, match="must start with a letter"):
        load_config_file(path)


def test_unreadable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "tablescout.yaml"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ConfigError, match="cannot read the configuration file"):
        load_config_file(path)
