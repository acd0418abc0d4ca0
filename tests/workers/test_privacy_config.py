"""Privacy mode in tablescout.yaml: read installation-wide and per source, a bad value refused with where and why
(the configuration in use kept), and which turns it covers (the strictest source wins, hosted models only)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.access.privacy import hosted, schema_only, source_privacy
from core.errors import ConfigError
from tests.support import isolated_settings, load_config
from workers.turns.private_answers import turn_is_private

SOURCES = """\
sources:
  erp:
    url: sqlite:////data/erp.sqlite
    aliases: [orders]
    privacy: schema_only
  billing:
    url: sqlite:////data/billing.sqlite
  reference:
    url: sqlite:////data/reference.sqlite
    privacy: "off"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tablescout.yaml"
    path.write_text(text)
    return path


def test_privacy_is_off_unless_written(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, "sources:\n  erp:\n    url: sqlite:////data/erp.sqlite\n"))
    assert config.privacy == "off"
    assert source_privacy(config, "erp") == "off"
    assert not schema_only(config, ["erp"])


def test_a_source_sets_its_own_mode_and_others_take_the_installations(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, SOURCES))
    assert source_privacy(config, "erp") == "schema_only"
    assert source_privacy(config, "ORDERS") == "schema_only"  # an alias, in any case
    assert source_privacy(config, "billing") == "off"
    assert not schema_only(config, ["billing", "reference"])
    assert schema_only(config, ["billing", "erp"])  # the strictest source wins

    everywhere = load_config(_write(tmp_path, "privacy: schema_only\n" + SOURCES))
    assert source_privacy(everywhere, "billing") == "schema_only"
    assert source_privacy(everywhere, "not-configured") == "schema_only"
    assert source_privacy(everywhere, "reference") == "off"  # its own setting replaces the installation's


@pytest.mark.parametrize("written", ["off", "Off", "false", "OFF"])
def test_a_bare_off_reads_as_the_mode_off(tmp_path: Path, written: str) -> None:
    config = load_config(_write(tmp_path, f"privacy: {written}\n"))
    assert config.privacy == "off"


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("privacy: schema-only\n", 1, "privacy"),
        ("privacy: true\n", 1, "privacy"),
        (SOURCES.replace("privacy: schema_only", "privacy: values_only"), 5, "sources.erp.privacy"),
    ],
)
def test_a_bad_mode_names_file_line_key_and_the_modes(tmp_path: Path, text: str, line: int, key: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert f"{path}:{line}: {key}: privacy must be one of off, schema_only" in message


def test_a_bad_mode_keeps_the_configuration_in_use(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = isolated_settings(tmp_path)
    settings.config_path.write_text("privacy: schema_only\n" + SOURCES)
    assert settings.file.privacy == "schema_only"
    settings.config_path.write_text("privacy: schema_onyl\n" + SOURCES)
    with caplog.at_level(logging.ERROR, logger="core.config.watch"):
        assert settings.file.privacy == "schema_only"  # the last valid version, not "off"
    problem = settings.config_state().problem
    assert problem is not None
    assert "privacy must be one of off, schema_only" in problem


def test_only_hosted_models_are_covered(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, SOURCES))
    assert hosted("anthropic:claude-sonnet-4-5")
    assert hosted("openai:qwen2.5-7b-instruct")  # an OpenAI-compatible endpoint may run anywhere
    assert not hosted("local:qwen2.5-coder-1.5b-instruct")
    assert turn_is_private(config, "anthropic:m", ["billing", "erp"])
    assert not turn_is_private(config, "local:m", ["billing", "erp"])
    assert not turn_is_private(config, "openai:m", ["billing", "reference"])
