"""`tablescout model install-local|serve-local` as a user runs them: installing an operator's GGUF file, refusals with
one-line errors, and serve-local refusing what it must not serve (the real model is served in the local-model test)."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

from tests.support import run_cli
from workers.models.registry import describe_model_setup


def fake_gguf(path: Path) -> Path:
    path.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"not really weights" * 64)
    return path


def record(home: Path) -> dict[str, object]:
    return dict(json.loads((home / "models" / "local-model.json").read_text()))


def test_install_local_copies_an_operators_file(home: Path, tmp_path: Path) -> None:
    own = fake_gguf(tmp_path / "my-model.gguf")
    digest = hashlib.sha256(own.read_bytes()).hexdigest()

    result = run_cli(home, "model", "install-local", "--gguf", str(own), "--sha256", digest)

    assert result.returncode == 0, result.stderr
    assert "Installed the local model my-model" in result.stdout
    assert record(home)["sha256"] == digest
    assert (home / "models" / "my-model.gguf").read_bytes() == own.read_bytes()


def test_install_local_refuses_with_one_line_and_records_nothing(home: Path, tmp_path: Path) -> None:
    own = fake_gguf(tmp_path / "my-model.gguf")
    cases = [
        (["--gguf", str(own), "--sha256", "0" * 64], "refused:"),
        (["--gguf", str(own), "--size", "0.5b"], "give --size or --gguf, not both"),
        (["--sha256", "0" * 64], "--sha256 checks a file given with --gguf"),
        (["--gguf", str(tmp_path / "absent.gguf")], "there is no file"),
        (["--size", "2b"], "Invalid value for '--size'"),
    ]
    for arguments, message in cases:
        result = run_cli(home, "model", "install-local", *arguments)
        assert result.returncode != 0, arguments
        assert message in result.stderr, (arguments, result.stderr)
        assert "Traceback" not in result.stderr
    assert not (home / "models" / "local-model.json").exists()


def test_serve_local_needs_an_installed_model(home: Path) -> None:
    result = run_cli(home, "model", "serve-local")
    assert result.returncode == 1
    assert "no local model is installed" in result.stderr
    assert "tablescout model install-local" in result.stderr


def test_serve_local_refuses_a_file_changed_after_installation(home: Path, tmp_path: Path) -> None:
    assert run_cli(home, "model", "install-local", "--gguf", str(fake_gguf(tmp_path / "m.gguf"))).returncode == 0
    installed = home / "models" / "m.gguf"
    installed.write_bytes(installed.read_bytes().replace(b"weights", b"WEIGHTS"))

    result = run_cli(home, "model", "serve-local", "--port", "0")

    assert result.returncode == 1
    assert "refused:" in result.stderr
    assert "the record says" in result.stderr


def test_serve_local_reports_a_file_llama_cpp_cannot_load(home: Path, tmp_path: Path) -> None:
    assert run_cli(home, "model", "install-local", "--gguf", str(fake_gguf(tmp_path / "m.gguf"))).returncode == 0
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    result = run_cli(home, "model", "serve-local", "--port", str(port), "--threads", "1")

    assert result.returncode == 1
    assert "llama.cpp could not start" in result.stderr


def test_serve_local_refuses_a_port_in_use(home: Path, tmp_path: Path) -> None:
    assert run_cli(home, "model", "install-local", "--gguf", str(fake_gguf(tmp_path / "m.gguf"))).returncode == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli(home, "model", "serve-local", "--port", str(port))
    assert result.returncode == 1
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr


def test_setup_help_says_how_to_install_the_local_model() -> None:
    text = describe_model_setup()
    assert "pip install 'tablescout[local-model]' && tablescout model install-local" in text
    assert "TABLESCOUT_MODEL=local:" in text
