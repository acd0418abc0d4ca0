"""A running process follows edits of the configuration file; an invalid edit keeps the last valid version."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from core.config.settings import load_settings
from core.config.watch import ConfigWatch
from core.errors import ConfigError
from tests.support import isolated_settings

OPEN = "roles:\n  staff:\n    grants:\n      - database: erp\ndefault_role: staff\n"
REVOKED = 'roles:\n  staff:\n    grants:\n      - database: erp\n        deny: ["EMP_*"]\ndefault_role: staff\n'


def _age(path: Path, seconds: float = 60) -> None:
    """Date the file back, as an edit made a while ago (the watch re-reads recently modified files anyway)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - int(seconds * 1e9)))


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    settings = isolated_settings(tmp_path)
    settings.config_path.write_text(OPEN)
    assert settings.file.roles["staff"].grants[0].deny == []
    settings.config_path.write_text(REVOKED)
    assert settings.file.roles["staff"].grants[0].deny == ["EMP_*"]
    assert settings.config_state().problem is None


def test_an_edit_with_the_same_size_and_time_is_seen_while_recent(tmp_path: Path) -> None:
    path = tmp_path / "tablescout.yaml"
    path.write_text(OPEN.replace("staff", "aaaaa"))
    watch = ConfigWatch(path)
    first = watch.current()
    stat = path.stat()
    path.write_text(OPEN.replace("staff", "bbbbb"))  # same size; then the same timestamps as before
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert set(watch.current().config.roles) == {"bbbbb"}
    assert first.digest != watch.current().digest


def test_an_unchanged_file_is_not_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "tablescout.yaml"
    path.write_text(OPEN)
    _age(path)
    watch = ConfigWatch(path)
    assert watch.current() is watch.current()


def test_an_invalid_edit_keeps_the_last_valid_configuration(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = isolated_settings(tmp_path)
    settings.config_path.write_text(REVOKED)
    loaded = settings.config_state()
    settings.config_path.write_text(REVOKED.replace("deny:", "deni:"))
    with caplog.at_level(logging.ERROR, logger="core.config.watch"):
        state = settings.config_state()
        settings.config_state()
    assert state.config == loaded.config  # the denial still holds
    assert state.loaded_at == loaded.loaded_at
    assert state.problem is not None
    assert "tablescout.yaml:5: roles.staff.grants.0.deni: unknown key" in state.problem
    report = state.health()
    assert report["state"] == "invalid"
    assert report["loaded_at"] == loaded.loaded_at.isoformat(timespec="seconds")
    [logged] = [r for r in caplog.records if "stays in use" in r.getMessage()]  # logged once, with the reason
    assert "deni: unknown key" in logged.getMessage()
    with pytest.raises(ConfigError, match="deni: unknown key"):  # a command starting now refuses the file
        load_settings_for(tmp_path)
    settings.config_path.write_text(OPEN)
    fixed = settings.config_state()
    assert fixed.problem is None
    assert fixed.config.roles["staff"].grants[0].deny == []
    assert fixed.health()["state"] == "ok"


def test_broken_yaml_and_an_unreadable_file_keep_the_last_valid_configuration(tmp_path: Path) -> None:
    settings = isolated_settings(tmp_path)
    settings.config_path.write_text(REVOKED)
    assert settings.config_state().problem is None
    settings.config_path.write_text("roles: [unclosed\n")
    assert "not valid YAML" in (settings.config_state().problem or "")
    assert settings.file.roles["staff"].grants[0].deny == ["EMP_*"]
    settings.config_path.write_bytes(b"roles: {}\n\xff\xfe")
    assert "cannot read the configuration file" in (settings.config_state().problem or "")
    assert settings.file.roles["staff"].grants[0].deny == ["EMP_*"]


def test_a_file_never_valid_raises(tmp_path: Path) -> None:
    settings = isolated_settings(tmp_path)
    settings.config_path.write_text("rolez: {}\n")
    with pytest.raises(ConfigError, match="rolez: unknown key"):
        _ = settings.file
    settings.config_path.write_text(OPEN)
    assert "staff" in settings.file.roles


def load_settings_for(home: Path) -> object:
    with pytest.MonkeyPatch.context() as patch:
        for name in [k for k in os.environ if k.startswith("TABLESCOUT_")]:
            patch.delenv(name)
        patch.setenv("TABLESCOUT_HOME", str(home))
        return load_settings()
