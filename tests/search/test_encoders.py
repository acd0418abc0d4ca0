"""The int8 ONNX embedder: made once from the installed MiniLM weights, cached under the home, verified by hash at
every load, refused (never silently replaced) when a file changed, and close to the torch model's vectors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.config.settings import Settings
from core.errors import ConfigError
from search import encoder_onnx, encoder_use
from search.encoder_cache import EncoderIntegrityError
from search.encoder_onnx import OnnxEmbedder, prepare
from search.encoder_use import UseEmbedder
from search.encoders import SentenceEmbedder, embedder_for, make_embedder

TEXTS = [
    "how many orders were placed in 2024?",
    "Table ORD_MST (order master) in database erp. Key: ORD_NO. Columns: ORD_NO, ORD_DT, CUST_ID, STATUS_CODE.",
    "Table EMP_MST (employee master) columns: EMP_NO (employee no); SAL_AMT (salary amount) monthly base salary",
    "which warehouse holds the most stock",
    "invoices that are past their due date",
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home whose cache entry was made once (export, quantisation and check: some seconds)."""
    path = tmp_path_factory.mktemp("encoder-home")
    prepare(path)
    return path


def entry_of(home: Path) -> Path:
    (entry,) = [p for p in (home / "encoders").iterdir() if p.is_dir()]
    return entry


def copy_home(home: Path, target: Path) -> Path:
    shutil.copytree(home / "encoders", target / "encoders")
    return entry_of(target)


def test_the_cache_entry_is_made_once_and_reused(home: Path) -> None:
    entry = entry_of(home)
    assert entry.name.startswith(encoder_onnx.RECIPE)
    made = {p.name: p.stat().st_mtime_ns for p in entry.iterdir()}
    assert set(made) == {"model.onnx", "tokenizer.json", "manifest.json"}
    assert prepare(home) == entry
    OnnxEmbedder.prepared(home).embed(["reused"])
    assert {p.name: p.stat().st_mtime_ns for p in entry.iterdir()} == made
    assert [p.name for p in (home / "encoders").iterdir() if p.is_dir()] == [entry.name]  # no half-made entries


def test_a_changed_model_file_is_refused_with_the_path_and_what_to_do(home: Path, tmp_path: Path) -> None:
    entry = copy_home(home, tmp_path)
    model = entry / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one weight byte: the file still loads, the vectors would differ
    model.write_bytes(bytes(data))
    with pytest.raises(EncoderIntegrityError) as raised:
        OnnxEmbedder.prepared(tmp_path)
    message = str(raised.value)
    assert str(model) in message
    assert "changed or damaged" in message
    assert "Delete the folder" in message
    assert isinstance(raised.value, ConfigError)  # the commands print it as a configuration error
    with pytest.raises(EncoderIntegrityError):  # and never made again behind the operator's back
        prepare(tmp_path)
    assert model.read_bytes() == bytes(data)


def test_a_missing_tokenizer_or_manifest_is_refused(home: Path, tmp_path: Path) -> None:
    entry = copy_home(home, tmp_path / "a")
    (entry / "tokenizer.json").unlink()
    with pytest.raises(EncoderIntegrityError, match=r"tokenizer\.json has sha256 missing"):
        prepare(tmp_path / "a")
    entry = copy_home(home, tmp_path / "b")
    (entry / "manifest.json").write_text("{not json")
    with pytest.raises(EncoderIntegrityError, match=r"manifest\.json"):
        prepare(tmp_path / "b")


def test_a_manifest_from_another_recipe_is_refused(home: Path, tmp_path: Path) -> None:
    entry = copy_home(home, tmp_path)
    manifest = entry / "manifest.json"
    manifest.write_text(manifest.read_text().replace(encoder_onnx.RECIPE, "some-other-recipe"))
    with pytest.raises(EncoderIntegrityError, match="was not made by"):
        prepare(tmp_path)


def test_bundled_weights_other_than_the_pinned_ones_are_refused(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed package whose files are not the pinned ones: refused before anything is exported."""
    real = encoder_onnx.bundled_model_dir()
    altered = tmp_path / "model"
    altered.mkdir()
    for item in real.iterdir():
        (altered / item.name).symlink_to(item)
    (altered / "tokenizer.json").unlink()
    (altered / "tokenizer.json").write_text((real / "tokenizer.json").read_text() + "\n")
    monkeypatch.setattr(encoder_onnx, "bundled_model_dir", lambda: altered)
    with pytest.raises(EncoderIntegrityError, match="not the all-MiniLM-L6-v2 this tablescout was checked with"):
        prepare(tmp_path / "home")
    assert not (tmp_path / "home" / "encoders").exists() or not any((tmp_path / "home" / "encoders").iterdir())


def test_a_model_directory_that_is_not_one_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a directory"):
        prepare(tmp_path, str(tmp_path / "no-such-model"))
    (tmp_path / "half").mkdir()
    with pytest.raises(ConfigError, match=r"has no model\.safetensors, tokenizer\.json, config\.json"):
        prepare(tmp_path, str(tmp_path / "half"))


def test_int8_vectors_are_close_to_the_torch_models(home: Path) -> None:
    int8 = OnnxEmbedder.prepared(home, max_tokens=128).embed(TEXTS)
    reference = SentenceEmbedder(max_tokens=128).embed(TEXTS)
    assert int8.shape == reference.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-4)
    assert float(np.min(np.sum(int8 * reference, axis=1))) > 0.98
    # each text's nearest neighbour among the others under int8 is the reference's nearest, or one the reference
    # scores within 0.02 of it: quantisation may only swap near-ties (text 0 sits 0.31 from text 3 and 0.32 from 4)
    reference_similarity = reference @ reference.T - 2 * np.eye(len(TEXTS))
    nearest = np.argmax(int8 @ int8.T - 2 * np.eye(len(TEXTS)), axis=1)
    best = reference_similarity.max(axis=1)
    chosen = reference_similarity[np.arange(len(TEXTS)), nearest]
    assert np.all(best - chosen <= 0.02), (nearest.tolist(), np.round(best - chosen, 3).tolist())
    # the two cards are each other's nearest, far ahead of any question
    assert nearest[1] == 2
    assert nearest[2] == 1


def test_unsigned_weights_make_an_entry_that_agrees_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unsigned export, which a CPU without VNNI keeps when the signed one falls short there (cosine 0.979 against
    0.991 on an AVX2-only EPYC), made on any CPU: it agrees with the torch model and its manifest names it."""
    monkeypatch.setattr(encoder_onnx, "machine_cache_root", lambda: tmp_path / "machine-cache")
    monkeypatch.setattr(encoder_onnx, "WEIGHTS", ("u8",))
    entry = prepare(tmp_path / "u8-home")
    manifest = json.loads((entry / "manifest.json").read_text())
    assert manifest["weights"] == "u8"
    assert manifest["agreement"] >= encoder_onnx.MIN_AGREEMENT
    unsigned = OnnxEmbedder.from_entry(entry, max_tokens=128).embed(TEXTS)
    reference = SentenceEmbedder(max_tokens=128).embed(TEXTS)
    assert float(np.min(np.sum(unsigned * reference, axis=1))) > 0.98


def test_an_export_that_agrees_with_no_weights_is_refused_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where neither signed nor unsigned weights agree well enough, the build stops with the figure and what to use
    instead, and no half-made entry stays behind."""
    monkeypatch.setattr(encoder_onnx, "machine_cache_root", lambda: tmp_path / "machine-cache")
    monkeypatch.setattr(encoder_onnx, "MIN_AGREEMENT", 1.001)  # above any cosine: both weight types fall short
    home = tmp_path / "strict-home"
    with pytest.raises(ConfigError, match=r"agrees with the float model only to cosine 0\.9\d\d .*'minilm'"):
        prepare(home)
    root = encoder_onnx.cache_root(home)
    assert [p.name for p in root.iterdir() if p.is_dir()] == []
    assert not (tmp_path / "machine-cache").exists()


def test_texts_are_cut_at_the_token_limit(home: Path) -> None:
    embedder = OnnxEmbedder.prepared(home, max_tokens=16)
    words = "orders customers invoices payments shipments warehouses products employees " * 4
    first, longer = embedder.embed([words, words + " salaries returns stock"])
    assert float(first @ longer) > 0.9999  # both cut to the same 16 tokens
    assert embedder.embed([]).shape == (0, 384)


def test_settings_choose_the_encoder_and_it_is_shared(home: Path) -> None:
    settings = Settings(home=home)
    assert settings.embedding_encoder == "minilm-int8"
    assert settings.embedding_max_tokens == 128
    chosen = embedder_for(settings)
    assert isinstance(chosen, OnnxEmbedder)
    assert chosen.max_tokens == 128
    assert embedder_for(Settings(home=home)) is chosen
    torch_one = make_embedder("minilm", home, None, 128)
    assert isinstance(torch_one, SentenceEmbedder)
    with pytest.raises(ConfigError, match="unknown embedding encoder 'bert'; tablescout knows minilm-int8"):
        make_embedder("bert", home)


def test_the_multilingual_encoder_fits_the_store_through_a_verified_projection(home: Path, tmp_path: Path) -> None:
    use = make_embedder("use-multilingual", tmp_path)
    korean, english, unrelated = use.embed(["지역별 고객 수", "number of customers per region", "ship the parcel"])
    assert korean.shape == (384,)
    assert np.isclose(float(np.linalg.norm(korean)), 1.0, atol=1e-4)
    assert float(korean @ english) > float(korean @ unrelated)  # a Korean question meets its English words
    raw = UseEmbedder(tmp_path, project=False).embed(["지역별 고객 수", "number of customers per region"])
    assert raw.shape == (2, 512)
    # the projection keeps the model's own similarities closely
    assert abs(float(raw[0] @ raw[1]) - float(korean @ english)) < 0.05
    (entry,) = [p for p in (tmp_path / "encoders").iterdir() if p.name.startswith(encoder_use.RECIPE)]
    projection = entry / encoder_use.PROJECTION_NAME
    projection.write_bytes(projection.read_bytes()[:-4] + b"\0\0\0\0")
    with pytest.raises(EncoderIntegrityError, match="changed or damaged"):
        UseEmbedder(tmp_path)
    with pytest.raises(ConfigError, match="embedding_model applies to the MiniLM encoders"):
        make_embedder("use-multilingual", home, "/models/x")


def test_another_installation_takes_the_machines_verified_copy(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The machine cache saves the export for a second home; a damaged copy there is not used."""
    machine = tmp_path / "machine-cache"
    monkeypatch.setattr(encoder_onnx, "machine_cache_root", lambda: machine)
    machine.mkdir()
    shutil.copytree(entry_of(home), machine / entry_of(home).name)
    second = prepare(tmp_path / "second")
    assert (second / "model.onnx").read_bytes() == (entry_of(home) / "model.onnx").read_bytes()
    damaged = machine / entry_of(home).name / "tokenizer.json"
    damaged.write_text(damaged.read_text().replace("[UNK]", "[UNKNOWN]"))
    third = prepare(tmp_path / "third")  # made again from the pinned weights instead
    assert (third / "tokenizer.json").read_bytes() == (entry_of(home) / "tokenizer.json").read_bytes()
    assert "[UNKNOWN]" in damaged.read_text()  # the damaged copy is left for the operator to see
