"""The mask key on the command line (issue 30 item 4): `init` creates it private to its owner, `mask-key rotate`
replaces it atomically and says what that means, `mask-key check` reports it, and a key from TABLESCOUT_MASK_KEY is
used as it is and never rotated here."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.cli.conftest import Cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_init_creates_a_private_key_once(cli: Cli) -> None:
    first = cli("init")
    assert first.returncode == 0, first.stderr
    key = cli.home / "mask.key"
    assert f"Mask key: {key} (created, readable by its owner only)" in first.stdout
    assert _mode(key) == 0o600
    text = key.read_text()
    assert len(text.strip()) == 64
    again = cli("init")
    assert again.returncode == 0, again.stderr
    assert f"Mask key: {key}\n" in again.stdout
    assert key.read_text() == text
    assert not [p.name for p in cli.home.iterdir() if p.name.startswith(".mask.key")]  # no temporary file left


def test_rotate_writes_a_new_private_key_and_says_hashes_change(cli: Cli) -> None:
    assert cli("init").returncode == 0
    key = cli.home / "mask.key"
    before = key.read_text()
    rotated = cli("mask-key", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    assert key.read_text() != before
    assert _mode(key) == 0o600
    assert "no longer match" in rotated.stdout
    checked = cli("mask-key", "check")
    assert checked.returncode == 0, checked.stderr
    assert f"Mask key: from {key}, usable" in checked.stdout


def test_a_key_others_may_read_is_reported(cli: Cli) -> None:
    assert cli("init").returncode == 0
    key = cli.home / "mask.key"
    key.chmod(0o644)
    again = cli("init")
    assert again.returncode == 1
    assert "may be read by others (mode 0644)" in again.stderr
    assert f"chmod 600 {key}" in again.stderr
    assert "up to date" in again.stdout  # the rest of init still ran
    checked = cli("mask-key", "check")
    assert checked.returncode == 1
    assert "may be read by others" in checked.stderr
    assert "Traceback" not in checked.stderr


def test_a_key_from_the_setting_is_used_and_not_rotated_here(cli: Cli) -> None:
    env = {"TABLESCOUT_MASK_KEY": "f" * 48}
    initialised = cli("init", env=env)
    assert initialised.returncode == 0, initialised.stderr
    assert "Mask key: from TABLESCOUT_MASK_KEY" in initialised.stdout
    assert not (cli.home / "mask.key").exists()
    rotated = cli("mask-key", "rotate", env=env)
    assert rotated.returncode == 1
    assert "put a new secret of at least 32 characters into TABLESCOUT_MASK_KEY" in rotated.stderr
    assert not (cli.home / "mask.key").exists()
    short = cli("mask-key", "check", env={"TABLESCOUT_MASK_KEY": "short"})
    assert short.returncode == 1
    assert "at least 32 characters" in short.stderr
    assert "short" not in short.stderr.replace("at least", "")  # the secret itself is never printed
