from __future__ import annotations

from pathlib import Path

import pytest

from core.config.settings import load_settings
from core.errors import ConfigError


def test_home_isolates_config_and_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TABLESCOUT_HOME", str(tmp_path))
    settings = load_settings()
    assert settings.home == tmp_path
    assert settings.config_path == tmp_path / "tablescout.yaml"
    assert settings.embedded_pgdata == tmp_path / "pgdata"
    assert settings.database_url is None


def test_config_path_and_urls_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "elsewhere.yaml"
    config.write_text("roles:\n  analyst: {}\ndefault_role: analyst\n")
    monkeypatch.setenv("TABLESCOUT_HOME", str(tmp_path))
    monkeypatch.setenv("TABLESCOUT_CONFIG", str(config))
    monkeypatch.setenv("TABLESCOUT_DATABASE_URL", "postgresql://u:s3cr3tpw@db/ts")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    settings = load_settings()
    assert settings.config_path == config
    assert settings.file.default_role == "analyst"
    assert settings.database_url is not None
    assert "s3cr3tpw" not in repr(settings)
    assert settings.anthropic_api_key is not None
    assert settings.anthropic_api_key.get_secret_value() == "sk-test"


def test_misspelt_variable_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TABLESCOUT_HOME", str(tmp_path))
    monkeypatch.setenv("TABLESCOUT_DATABSE_URL", "postgresql://x/y")
    with pytest.raises(ConfigError, match="TABLESCOUT_DATABSE_URL"):
        load_settings()


def test_invalid_file_fails_before_anything_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "tablescout.yaml").write_text("sources:\n  erp:\n    uri: sqlite:////x\n")
    monkeypatch.setenv("TABLESCOUT_HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=r"tablescout.yaml:3: sources.erp.uri: unknown key"):
        load_settings()
    assert not (tmp_path / "pgdata").exists()
